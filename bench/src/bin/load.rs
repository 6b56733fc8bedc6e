//! Loading safetensors weights: `Model.loadRam` plus a full read of every tensor, against the Python `safetensors`
//! package (`safe_open(framework="numpy")` and `get_tensor` of every tensor) and a plain sequential `read` of the same
//! file as the limit, side by side in one run, one thread each.
//!
//! `cargo xtask bench load` (which makes the Python environment), or
//! `cargo run --release -p uform-bench --bin load -- [--python PATH] [--mb N] [--rounds N]`
//!
//! The file (default 256 MB: 64 F32 tensors of 4 MB) is written under `target/bench-load/`. Every reader touches every
//! byte: uform and `read` fold the bytes into a checksum (8 bytes at a time), Python copies each tensor into a numpy
//! array. Before timing, a check: every tensor's name and a SipHash of its byte range, as `loadRam`'s view shows
//! it and as a plain read of the file finds it through the header, must agree tensor by tensor. Warm: the file is in the page cache. Cold: the page cache is dropped before each read, through
//! `/proc/sys/vm/drop_caches` when it can be written, else by evicting the file's pages with
//! `posix_fadvise(POSIX_FADV_DONTNEED)`; `mincore` confirms how much of the file stayed resident. Each figure is the
//! median of `--rounds` (default 5) runs, the readers taking turns within each round.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use uform_core::{Executor, ExecutorForRamConfig, Model, ModelLoadRamConfig};

const TENSOR_BYTES: usize = 4 << 20;

fn write_file(path: &Path, mb: usize) -> u64 {
    let tensors = (mb << 20) / TENSOR_BYTES;
    let mut entries = Vec::new();
    for i in 0..tensors {
        let (a, b) = (i * TENSOR_BYTES, (i + 1) * TENSOR_BYTES);
        entries.push(format!(r#""layer.{i}.weight":{{"dtype":"F32","shape":[1024,1024],"data_offsets":[{a},{b}]}}"#));
    }
    let mut header = format!("{{{}}}", entries.join(","));
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(&(header.len() as u64).to_le_bytes()).unwrap();
    f.write_all(header.as_bytes()).unwrap();
    let chunk: Vec<u8> = (0..TENSOR_BYTES).map(|i| ((i * 2654435761usize) >> 13) as u8).collect();
    for _ in 0..tensors {
        f.write_all(&chunk).unwrap();
    }
    let f = f.into_inner().unwrap();
    f.sync_all().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// Touches every byte (the timed work): an XOR of its 8-byte words, the last partial word zero-padded.
fn fold(data: &[u8]) -> u64 {
    let words = data.chunks_exact(8);
    let tail = words.remainder();
    let mut last = [0u8; 8];
    last[..tail.len()].copy_from_slice(tail);
    words.fold(u64::from_le_bytes(last), |s, w| s ^ u64::from_le_bytes(w.try_into().unwrap()))
}

fn hash(data: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new(); // SipHash-1-3 with fixed keys
    h.write(data);
    h.finish()
}

/// Every tensor's name and the hash of its bytes, in file order, through `loadRam`'s view.
fn uform_hashes(path: &str, executor: &Executor) -> Vec<(String, u64)> {
    let model = Model::load_ram(
        path,
        ModelLoadRamConfig { executor: Some(executor.clone()), memory_domains: None, precision: None, revision: None },
    )
    .unwrap();
    let weights = model.weights().unwrap();
    let hashes = weights.names().iter().map(|n| (n.to_string(), hash(weights.tensor(n).unwrap().data))).collect();
    drop(weights);
    model.free().unwrap();
    hashes
}

/// The same from one plain read of the file, each range found through the header's `data_offsets`.
fn read_hashes(path: &str) -> Vec<(String, u64)> {
    let bytes = std::fs::read(path).unwrap();
    let len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&bytes[8..8 + len]).unwrap();
    let data = &bytes[8 + len..];
    let mut tensors: Vec<(String, usize, usize)> = header
        .iter()
        .filter(|(name, _)| *name != "__metadata__")
        .map(|(name, t)| {
            let at = |i: usize| t["data_offsets"][i].as_u64().unwrap() as usize;
            (name.clone(), at(0), at(1))
        })
        .collect();
    tensors.sort_by_key(|t| t.1);
    tensors.into_iter().map(|(name, a, b)| (name, hash(&data[a..b]))).collect()
}

/// How the cache is emptied, or why it cannot be.
#[derive(Clone, Copy, PartialEq)]
enum Cold {
    DropCaches,
    Fadvise,
}

fn evict(path: &Path, how: Cold) -> f64 {
    if how == Cold::DropCaches {
        let _ = std::fs::write("/proc/sys/vm/drop_caches", "1");
    } else {
        let f = std::fs::File::open(path).unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: a valid descriptor; the advice only drops clean cached pages.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
    resident_fraction(path)
}

/// The fraction of the file's pages in the page cache, by `mincore` on a fresh mapping.
fn resident_fraction(path: &Path) -> f64 {
    let f = std::fs::File::open(path).unwrap();
    // SAFETY: `f` is an open file; the mapping is unmapped below, and nothing reads through it.
    let map = unsafe { memmap(&f) };
    // SAFETY: `sysconf` reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let pages = map.1.div_ceil(page);
    let mut vec = vec![0u8; pages];
    // SAFETY: the mapping is live and `vec` has one byte per page.
    unsafe { libc::mincore(map.0, map.1, vec.as_mut_ptr()) };
    // SAFETY: the mapping made above, unused after this.
    unsafe { libc::munmap(map.0, map.1) };
    vec.iter().filter(|&&b| b & 1 != 0).count() as f64 / pages as f64
}

unsafe fn memmap(f: &std::fs::File) -> (*mut libc::c_void, usize) {
    use std::os::fd::AsRawFd;
    let len = f.metadata().unwrap().len() as usize;
    let p = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_PRIVATE, f.as_raw_fd(), 0);
    assert_ne!(p, libc::MAP_FAILED);
    (p, len)
}

fn uform(path: &str, executor: &Executor) -> (f64, u64) {
    let start = Instant::now();
    let model = Model::load_ram(
        path,
        ModelLoadRamConfig { executor: Some(executor.clone()), memory_domains: None, precision: None, revision: None },
    )
    .unwrap();
    let weights = model.weights().unwrap();
    let mut sum = 0;
    for name in weights.names() {
        sum ^= fold(weights.tensor(name).unwrap().data);
    }
    drop(weights);
    model.free().unwrap();
    (start.elapsed().as_secs_f64(), std::hint::black_box(sum))
}

fn plain_read(path: &str) -> (f64, u64) {
    let start = Instant::now();
    let mut f = std::fs::File::open(path).unwrap();
    let mut buf = vec![0u8; 8 << 20];
    let mut sum = 0;
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        sum ^= fold(&buf[..n]);
    }
    (start.elapsed().as_secs_f64(), std::hint::black_box(sum))
}

fn python(python: &Path, script: &Path, path: &str) -> f64 {
    let out = Command::new(python).arg(script).arg(path).output().expect("run the Python reader");
    assert!(out.status.success(), "the Python reader failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().next().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("bad output: {text}"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let mb: usize = arg("--mb").map_or(256, |v| v.parse().unwrap());
    let rounds: usize = arg("--rounds").map_or(5, |v| v.parse().unwrap());
    let py = arg("--python").map(PathBuf::from);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let script = root.join("bench/load_safetensors.py");
    let dir = root.join("target/bench-load");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("model.safetensors");
    let bytes = write_file(&file, mb);
    let path = file.to_str().unwrap().to_string();
    let executor = Executor::for_ram(ExecutorForRamConfig { threads: Some(1), ..Default::default() }).unwrap();
    let (seen, read) = (uform_hashes(&path, &executor), read_hashes(&path));
    assert_eq!(seen.len(), (mb << 20) / TENSOR_BYTES, "uform saw {} tensors", seen.len());
    if let Some(i) = (0..seen.len().max(read.len())).find(|&i| seen.get(i) != read.get(i)) {
        panic!("uform and read disagree at tensor {i}: {:?} vs {:?}", seen.get(i), read.get(i));
    }
    println!(
        "check: {} tensors, name and SipHash of every byte range agree between loadRam and a plain read",
        seen.len()
    );

    let cold = if std::fs::write("/proc/sys/vm/drop_caches", "1").is_ok() {
        println!("cold: page cache dropped through /proc/sys/vm/drop_caches before each read");
        Cold::DropCaches
    } else {
        println!(
            "cold: /proc/sys/vm/drop_caches is not writable here; the file's pages are evicted with \
             posix_fadvise(POSIX_FADV_DONTNEED) before each read instead"
        );
        Cold::Fadvise
    };
    println!("file: {} MB in {} tensors, {rounds} rounds, 1 thread per reader", bytes >> 20, (mb << 20) / TENSOR_BYTES);
    let gb = bytes as f64 / 1e9;
    for warm in [false, true] {
        let (mut u, mut s, mut r, mut resident) = (Vec::new(), Vec::new(), Vec::new(), 0f64);
        for round in 0..rounds {
            for turn in 0..3 {
                if warm {
                    plain_read(&path);
                } else {
                    resident = resident.max(evict(&file, cold));
                }
                match (turn + round) % 3 {
                    0 => u.push(uform(&path, &executor).0),
                    1 => r.push(plain_read(&path).0),
                    _ => {
                        if let Some(py) = &py {
                            s.push(python(py, &script, &path))
                        }
                    }
                }
            }
        }
        let rate = |v: Vec<f64>| if v.is_empty() { "n/a".to_string() } else { format!("{:.2}", gb / median(v)) };
        let label = if warm {
            "warm page cache".to_string()
        } else {
            format!("cold, at most {:.1}% of the file resident before a read", resident * 100.0)
        };
        println!(
            "load{}: uform_gbps={} safetensors_gbps={} read_gbps={} ({label})",
            if warm { "" } else { " cold" },
            rate(u),
            rate(s),
            rate(r)
        );
    }
    executor.free().unwrap();
    let _ = std::fs::remove_file(&file);
}
