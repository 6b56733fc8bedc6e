//! Reading a model folder's files without ever blocking or reading without bound: each is checked to be a regular
//! file before it is opened and again through the open descriptor (a FIFO would block `open`, a device would
//! stream forever), and a side file is read whole only under a size limit.

use std::fs::{File, Metadata};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// A file type in words, for the ones that are not regular files or directories.
pub fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Why a file was not opened or read.
#[derive(Debug)]
pub enum FileProblem {
    /// The error that said so.
    NotFound(std::io::Error),
    /// What it is instead of a regular file: "a FIFO", "a directory", …
    NotRegular(&'static str),
    /// Its size, over the limit.
    TooLarge(u64),
    /// What was being done ("opening", "reading") and the error.
    Io(&'static str, std::io::Error),
}

/// Opens a regular file without ever blocking: the type is checked before and after `open`.
pub fn open_regular_file(path: &Path) -> std::result::Result<(File, u64), FileProblem> {
    let io = |action| {
        move |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::NotFound => FileProblem::NotFound(e),
            _ => FileProblem::Io(action, e),
        }
    };
    let before = std::fs::metadata(path).map_err(io("reading"))?;
    if !before.is_file() {
        return Err(FileProblem::NotRegular(kind_of(&before)));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(io("opening"))?;
    let meta = file.metadata().map_err(io("reading"))?;
    if !meta.is_file() {
        return Err(FileProblem::NotRegular(kind_of(&meta)));
    }
    Ok((file, meta.len()))
}

/// Reads a regular file of at most `limit` bytes whole (a side file: JSON, a tokenizer), never blocking.
pub fn read_regular(path: &Path, limit: u64) -> std::result::Result<Vec<u8>, FileProblem> {
    let (file, len) = open_regular_file(path)?;
    if len > limit {
        return Err(FileProblem::TooLarge(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    std::io::Read::read_to_end(&mut std::io::Read::take(&file, limit + 1), &mut bytes)
        .map_err(|e| FileProblem::Io("reading", e))?;
    if bytes.len() as u64 > limit {
        return Err(FileProblem::TooLarge(bytes.len() as u64)); // it grew since the check
    }
    Ok(bytes)
}
