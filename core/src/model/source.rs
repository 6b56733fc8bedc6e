//! From a `path` to checked safetensors shards in memory the process owns: a `.safetensors` file, a
//! `model.safetensors.index.json`, or a directory holding either (the Hugging Face layout).
//!
//! Every file is checked to be a regular file before it is opened (a FIFO would block `open`, a device would
//! stream forever), opened with `O_NONBLOCK` and checked again through the open descriptor, so a file swapped for
//! a FIFO in between cannot block either. Each file is read whole, with `read`, into an anonymous mapping (placed
//! first, so its pages land where the caller binds them), which is then made read-only; its header is checked
//! before any tensor is read, and nothing reads outside it. The file is never mapped: once `open` returns, the
//! file may be truncated, rewritten or deleted and nothing read from it changes or faults. A file that shrinks
//! while it is read is an I/O error naming it.

use super::file::{open_regular_file, read_regular, FileProblem};
use super::header::{self, shown, Entry};
use crate::error::{Error, ErrorKind, Result};
use memmap2::Mmap;
use std::collections::HashMap;
use std::fs::{File, Metadata};
use std::path::{Path, PathBuf};

/// The index file name of a sharded Hugging Face model.
pub const INDEX_NAME: &str = "model.safetensors.index.json";
/// The weights file name of an unsharded Hugging Face model.
pub const WEIGHTS_NAME: &str = "model.safetensors";
/// The largest index or `config.json` read.
const MAX_JSON_BYTES: u64 = 100_000_000;

/// One safetensors file, read into memory and checked.
pub struct Shard {
    pub path: PathBuf,
    pub map: Mmap,
    pub data_start: usize,
    pub tensors: Vec<Entry>,
}

impl std::fmt::Debug for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shard").field("path", &self.path).field("bytes", &self.map.len()).finish()
    }
}

/// What a `path` resolved to.
#[derive(Debug)]
pub struct Source {
    pub shards: Vec<Shard>,
    /// The folder holding the weights, `config.json` and `tokenizer.json`.
    pub directory: PathBuf,
    /// `model_type` of `config.json` in `directory`, when there is one.
    pub architecture: Option<String>,
}

fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::invalid_argument("path", format!("{}: {what}", path.display()))
}

fn stat(path: &Path) -> Result<Metadata> {
    std::fs::metadata(path).map_err(|e| Error::io("reading", path, &e))
}

/// The error for a weights file or an index that could not be opened or read.
fn failed(path: &Path, problem: FileProblem) -> Error {
    match problem {
        FileProblem::NotFound(e) => Error::io("reading", path, &e),
        FileProblem::NotRegular(kind) => bad(path, format!("is {kind}, not a regular file")),
        FileProblem::TooLarge(len) => {
            bad(path, format!("is {len} bytes, over the {MAX_JSON_BYTES}-byte limit for a JSON file"))
        }
        FileProblem::Io(action, e) => Error::io(action, path, &e),
    }
}

fn open_regular(path: &Path) -> Result<(File, u64)> {
    open_regular_file(path).map_err(|problem| failed(path, problem))
}

/// Reads a small JSON file whole (an index or `config.json`).
fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text = read_regular(path, MAX_JSON_BYTES).map_err(|problem| failed(path, problem))?;
    serde_json::from_slice(&text).map_err(|e| bad(path, format!("is not valid JSON: {e}")))
}

/// What places a shard's memory before it is filled (binding it to NUMA nodes); it records its own failures.
pub type Place<'a> = &'a mut dyn FnMut(&[u8]);

/// Reads one safetensors file into memory the process owns, placed by `place` before a byte is written, made
/// read-only, and checks its header.
pub fn read_shard(path: &Path, place: Place<'_>) -> Result<Shard> {
    let (mut file, len) = open_regular(path)?;
    if len == 0 {
        return Err(bad(path, "is empty, not a safetensors file (it has no 8-byte header length)"));
    }
    let len =
        usize::try_from(len).map_err(|_| bad(path, format!("is {len} bytes, past this machine's address space")))?;
    let mut memory = memmap2::MmapMut::map_anon(len).map_err(|e| {
        let kind = if e.raw_os_error() == Some(libc::ENOMEM) { ErrorKind::OutOfMemory } else { ErrorKind::Io };
        Error::new(kind, format!("`path` {}: {len} bytes of memory for its contents: {e}", path.display()))
    })?;
    place(&memory);
    // Fault every page in with one call (Linux 5.14+; elsewhere the read faults them in one by one): placed by the
    // binding above, and several times faster than a fault per 4 KiB page during the read.
    #[cfg(target_os = "linux")]
    let _ = memory.advise(memmap2::Advice::PopulateWrite);
    let mut filled = 0;
    while filled < len {
        match std::io::Read::read(&mut file, &mut memory[filled..]) {
            Ok(0) => {
                return Err(Error::new(
                    ErrorKind::Io,
                    format!("reading {}: the file shrank to {filled} of {len} bytes while it was read", path.display()),
                ))
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io("reading", path, &e)),
        }
    }
    drop(file);
    let map = memory.make_read_only().map_err(|e| Error::io("protecting the contents of", path, &e))?;
    let header = header::parse(&map).map_err(|e| bad(path, format!("is not a valid safetensors file: {e}")))?;
    Ok(Shard { path: path.to_path_buf(), map, data_start: header.data_start as usize, tensors: header.tensors })
}

/// Resolves `path` (see the module documentation; a Hub name at `revision` through `hub.rs`), reads every shard
/// (each placed by `place`) and the architecture.
pub fn open(path: &str, revision: Option<&str>, place: Place<'_>) -> Result<Source> {
    if path.is_empty() {
        return Err(Error::invalid_argument(
            "path",
            "must name a .safetensors file, a model.safetensors.index.json or a directory holding either, got an empty string",
        ));
    }
    let given = super::hub::resolve(path, revision)?;
    let given = given.as_path();
    let meta = stat(given)?;
    let file = if meta.is_dir() { weights_in(given)? } else { given.to_path_buf() };
    let directory = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let is_index = file.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".json"));
    let shards = if is_index { sharded(&file, &directory, place)? } else { vec![read_shard(&file, place)?] };
    let architecture = architecture(&directory)?;
    Ok(Source { shards, directory, architecture })
}

/// The weights file of a model directory: the index, else `model.safetensors`, else its only `.safetensors` file;
/// without any, the same in the folder its `modules.json` puts the Transformer module in, when that is another
/// (an older sentence-transformers layout, `0_Transformer/`).
fn weights_in(dir: &Path) -> Result<PathBuf> {
    let here = weights_here(dir);
    match (&here, super::layout::transformer_folder(dir)) {
        (Err(_), Ok(Some(folder))) if folder.is_dir() => weights_here(&folder),
        _ => here,
    }
}

fn weights_here(dir: &Path) -> Result<PathBuf> {
    for name in [INDEX_NAME, WEIGHTS_NAME] {
        let candidate = dir.join(name);
        if std::fs::symlink_metadata(&candidate).is_ok() {
            return Ok(candidate);
        }
    }
    let listing = std::fs::read_dir(dir).map_err(|e| Error::io("listing", dir, &e))?;
    let mut found = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|e| Error::io("listing", dir, &e))?;
        if entry.file_name().to_str().is_some_and(|n| n.ends_with(".safetensors")) {
            found.push(entry.path());
        }
    }
    found.sort();
    match found.len() {
        0 => Err(bad(
            dir,
            format!(
                "is a directory without weights: it holds no {WEIGHTS_NAME}, {INDEX_NAME} or other .safetensors file"
            ),
        )),
        1 => Ok(found.remove(0)),
        _ => Err(bad(
            dir,
            format!(
                "holds {} .safetensors files and no {INDEX_NAME} saying how they fit together: {}",
                found.len(),
                found.iter().filter_map(|p| p.file_name()).map(|n| n.to_string_lossy()).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// The shards an index names, in name order, each checked against the index's `weight_map`.
fn sharded(index: &Path, directory: &Path, place: Place<'_>) -> Result<Vec<Shard>> {
    let json = read_json(index)?;
    let Some(map) = json.get("weight_map").and_then(|m| m.as_object()) else {
        return Err(bad(index, "is not a sharded model index: it has no `weight_map` object"));
    };
    let mut expected: HashMap<&str, &str> = HashMap::with_capacity(map.len());
    let mut names: Vec<&str> = Vec::new();
    for (tensor, shard) in map {
        let Some(shard) = shard.as_str() else {
            return Err(bad(
                index,
                format!("`weight_map` gives tensor {} a shard that is not a file name", shown(tensor)),
            ));
        };
        let plain = Path::new(shard).components().count() == 1
            && matches!(Path::new(shard).components().next(), Some(std::path::Component::Normal(_)));
        if !plain {
            return Err(bad(
                index,
                format!(
                    "`weight_map` puts tensor {} in {}, which is not a file name in the index's directory",
                    shown(tensor),
                    shown(shard)
                ),
            ));
        }
        expected.insert(tensor, shard);
        if !names.contains(&shard) {
            names.push(shard);
        }
    }
    if names.is_empty() {
        return Err(bad(index, "`weight_map` names no tensor"));
    }
    names.sort_unstable();
    let mut shards = Vec::with_capacity(names.len());
    let mut owner: HashMap<String, usize> = HashMap::new();
    for name in &names {
        let path = directory.join(name);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(bad(
                    index,
                    format!("names shard {}, which does not exist ({})", shown(name), path.display()),
                ))
            }
            _ => {}
        }
        let shard = read_shard(&path, &mut *place)?;
        for t in &shard.tensors {
            if let Some(&other) = owner.get(&t.name) {
                let other: &Shard = &shards[other];
                return Err(bad(&path, format!("tensor {} is also in {}", shown(&t.name), other.path.display())));
            }
            if expected.get(t.name.as_str()) != Some(name) {
                return Err(bad(
                    &path,
                    format!(
                        "holds tensor {}, which the index {} does not place in this shard",
                        shown(&t.name),
                        index.display()
                    ),
                ));
            }
            owner.insert(t.name.clone(), shards.len());
        }
        shards.push(shard);
    }
    for (tensor, shard) in &expected {
        if !owner.contains_key(*tensor) {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "`path` {}: the index places tensor {} in {}, which does not hold it",
                    index.display(),
                    shown(tensor),
                    shown(shard)
                ),
            ));
        }
    }
    Ok(shards)
}

/// `model_type` of `config.json` in `directory`; `None` without the file or the field.
fn architecture(directory: &Path) -> Result<Option<String>> {
    let config = directory.join("config.json");
    if std::fs::symlink_metadata(&config).is_err() {
        return Ok(None);
    }
    let json = read_json(&config)?;
    Ok(json.get("model_type").and_then(|t| t.as_str()).map(str::to_string))
}
