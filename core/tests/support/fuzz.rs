//! What the stable fuzz harnesses (image_fuzz.rs, safetensors_fuzz.rs) share: the environment they read, a worker
//! thread that runs each input under a time limit, the corpus reader, the seeded generator, and the failure report
//! that saves the input under `fuzz/artifacts/<target>/stable-<hash>` with the line that replays it. Each harness
//! brings its own check of one input and its own mutations. See `fuzz/README.md`.
//!
//! Environment: `UFORM_FUZZ_SECONDS` (mutation time; 0 skips it), `UFORM_FUZZ_SEED` (default from the clock;
//! printed), `UFORM_FUZZ_TIMEOUT_MS` (per input), `UFORM_FUZZ_REPLAY` (a file or folder to replay instead of the
//! corpus). The defaults are each harness's, in its [`Target`].
#![allow(dead_code)] // each test binary uses its own part of the support module

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// `name` from the environment as a number, `default` when unset; panics on anything else.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |v| v.trim().parse().unwrap_or_else(|_| panic!("{name}={v:?} is not a number")))
}

/// One harness: where its inputs and artifacts live, how it is replayed, and its defaults.
pub struct Target {
    /// The libFuzzer target's name: the folder under `fuzz/corpus/` and `fuzz/artifacts/`.
    pub name: &'static str,
    /// The test binary (`cargo test -p uform-core --test <test>`) that replays a saved input.
    pub test: &'static str,
    /// The default of `UFORM_FUZZ_SECONDS`.
    pub seconds: u64,
    /// The default of `UFORM_FUZZ_TIMEOUT_MS`.
    pub timeout_ms: u64,
    /// Whether a failure report also prints the input (its first 2 KiB, as text).
    pub show_input: bool,
}

impl Target {
    /// The committed corpus, `fuzz/corpus/<name>/`.
    pub fn corpus(&self) -> PathBuf {
        root().join("fuzz/corpus").join(self.name)
    }

    /// `UFORM_FUZZ_SECONDS`, or `None` when the mutation phase is skipped (0 seconds, or replaying).
    pub fn mutation_time(&self) -> Option<Duration> {
        let seconds = env_u64("UFORM_FUZZ_SECONDS", self.seconds);
        (seconds != 0 && replay().is_none()).then(|| Duration::from_secs(seconds))
    }

    /// Starts a worker thread that runs `check` on each input, under `UFORM_FUZZ_TIMEOUT_MS`.
    pub fn worker(&self, check: impl FnMut(&[u8]) -> Result<bool, String> + Send + 'static) -> Worker {
        Worker::new(Duration::from_millis(env_u64("UFORM_FUZZ_TIMEOUT_MS", self.timeout_ms)), check)
    }

    /// Saves `data` as `fuzz/artifacts/<name>/stable-<hash>` and panics with `why`, `context` and the replay line.
    pub fn fail(&self, why: &str, data: &[u8], context: &str) -> ! {
        let dir = root().join("fuzz/artifacts").join(self.name);
        let hash = data.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3));
        let file = dir.join(format!("stable-{hash:016x}"));
        let _ = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, data));
        let input = if self.show_input {
            format!("\ninput: {:?}", String::from_utf8_lossy(&data[..data.len().min(2048)]))
        } else {
            String::new()
        };
        panic!(
            "{why}\n{context}\nsaved in {}\nreplay: UFORM_FUZZ_REPLAY={} cargo test -p uform-core --test {}{input}",
            file.display(),
            file.display(),
            self.test
        );
    }
}

/// `UFORM_FUZZ_REPLAY`: a file or folder to replay instead of the corpus.
pub fn replay() -> Option<PathBuf> {
    std::env::var_os("UFORM_FUZZ_REPLAY").map(PathBuf::from)
}

/// The clock in nanoseconds, for a seed when `UFORM_FUZZ_SEED` is unset.
pub fn clock() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
}

/// Runs inputs on a worker thread so a hang is caught by a time limit.
pub struct Worker {
    send: mpsc::Sender<Vec<u8>>,
    recv: mpsc::Receiver<Result<bool, String>>,
    limit: Duration,
}

impl Worker {
    /// `check` answers `Ok(true)` for an input accepted, `Ok(false)` refused as it should be, `Err` a failure report.
    pub fn new(limit: Duration, mut check: impl FnMut(&[u8]) -> Result<bool, String> + Send + 'static) -> Worker {
        let (send, inputs) = mpsc::channel::<Vec<u8>>();
        let (results, recv) = mpsc::channel();
        std::thread::spawn(move || {
            for data in inputs {
                if results.send(check(&data)).is_err() {
                    break;
                }
            }
        });
        Worker { send, recv, limit }
    }

    /// `data`'s result, or a failure report when it runs past the limit.
    pub fn run(&self, data: &[u8]) -> Result<bool, String> {
        self.send.send(data.to_vec()).unwrap();
        self.recv.recv_timeout(self.limit).unwrap_or_else(|_| Err(format!("ran past {:?}", self.limit)))
    }
}

/// The files of `path` (a folder's files sorted by name, or one file) and their bytes.
pub fn read_inputs(path: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<PathBuf> = if path.is_dir() {
        std::fs::read_dir(path).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect()
    } else {
        vec![path.to_path_buf()]
    };
    files.sort();
    files.into_iter().map(|p| (p.clone(), std::fs::read(&p).unwrap())).collect()
}

/// xorshift64*, seeded by the harness.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545f4914f6cdd1d)
    }

    /// A number in `0..n`, 0 when `n` is 0.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Calls `step` with a fresh run number until `time` has passed; returns the runs made and the time taken.
pub fn for_time(time: Duration, mut step: impl FnMut(u64)) -> (u64, Duration) {
    let (start, mut runs) = (Instant::now(), 0u64);
    while start.elapsed() < time {
        runs += 1;
        step(runs);
    }
    (runs, start.elapsed())
}
