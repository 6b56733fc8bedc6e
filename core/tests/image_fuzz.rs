//! The stable fuzz harness for the image decoder (`uform_core::families::pixels`): replays every committed corpus
//! file (`fuzz/corpus/image_pixels/`) and the committed images (tests/fixtures/images/files/ and hostile/), then
//! mutates them for a few seconds: byte flips and overwrites, a range deleted or duplicated, a cut, and a header's
//! 32-bit field set to an extreme. Each input goes through `Preprocess::pixels` with the CLIP crop config, as the
//! libFuzzer target (`fuzz/fuzz_targets/image_pixels.rs`) does: a panic that escapes, an error that is not an
//! invalid argument naming `images[0]`, non-finite accepted pixels or an input slower than the limit fails, and the
//! input is written under `fuzz/artifacts/image_pixels/`. A decoder panic that `pixels` catches is counted and
//! printed, not failed. See `fuzz/README.md`.
//!
//! Environment: `UFORM_FUZZ_SECONDS` (mutation time, default 3; 0 skips it), `UFORM_FUZZ_SEED` (default from the
//! clock; printed), `UFORM_FUZZ_TIMEOUT_MS` (per input, default 5000), `UFORM_FUZZ_REPLAY` (a file or folder to
//! replay instead of the corpus).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use uform_core::error::ErrorKind;
use uform_core::families::pixels::Preprocess;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |v| v.trim().parse().unwrap_or_else(|_| panic!("{name}={v:?} is not a number")))
}

/// One input: `Ok(true)` decoded, `Ok(false)` refused as it should be, `Err` a failure report.
fn run_one(processor: &Preprocess, data: &[u8]) -> Result<bool, String> {
    let mut out = vec![f32::NAN; 3 * 64 * 64];
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| processor.pixels(data, 0, &mut out)))
        .map_err(|p| {
            let text = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
            format!("a panic escaped: {}", text.unwrap_or_default())
        })?;
    match result {
        Ok(()) if out.iter().all(|v| v.is_finite()) => Ok(true),
        Ok(()) => Err("accepted pixels that are not finite".into()),
        Err(e) if e.kind() == ErrorKind::InvalidArgument && e.message().starts_with("`images[0]` ") => {
            if e.message().contains("the decoder failed") {
                eprintln!("a decoder panic, caught: {e}");
            }
            Ok(false)
        }
        Err(e) => Err(format!("not an invalid argument naming `images[0]`: {:?} {e}", e.kind())),
    }
}

/// Runs inputs on a worker thread so a hang is caught by a time limit.
struct Worker {
    send: mpsc::Sender<Vec<u8>>,
    recv: mpsc::Receiver<Result<bool, String>>,
    limit: Duration,
}

impl Worker {
    fn new() -> Worker {
        let config = root().join("tests/fixtures/images/crops/clip/preprocessor_config.json");
        let processor = Preprocess::read(&config).unwrap();
        let (send, inputs) = mpsc::channel::<Vec<u8>>();
        let (results, recv) = mpsc::channel();
        std::thread::spawn(move || {
            for data in inputs {
                if results.send(run_one(&processor, &data)).is_err() {
                    break;
                }
            }
        });
        Worker { send, recv, limit: Duration::from_millis(env_u64("UFORM_FUZZ_TIMEOUT_MS", 5000)) }
    }
    fn run(&self, data: &[u8]) -> Result<bool, String> {
        self.send.send(data.to_vec()).unwrap();
        self.recv.recv_timeout(self.limit).unwrap_or_else(|_| Err(format!("ran past {:?}", self.limit)))
    }
}

fn fail(why: &str, data: &[u8], context: &str) -> ! {
    let dir = root().join("fuzz/artifacts/image_pixels");
    let hash = data.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3));
    let file = dir.join(format!("stable-{hash:016x}"));
    let _ = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, data));
    panic!(
        "{why}\n{context}\nsaved in {}\nreplay: UFORM_FUZZ_REPLAY={} cargo test -p uform-core --test image_fuzz",
        file.display(),
        file.display()
    );
}

fn read_inputs(path: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<PathBuf> = if path.is_dir() {
        std::fs::read_dir(path).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect()
    } else {
        vec![path.to_path_buf()]
    };
    files.sort();
    files.into_iter().map(|p| (p.clone(), std::fs::read(&p).unwrap())).collect()
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545f4914f6cdd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut data = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let n = data.len();
        match rng.below(6) {
            0 if n > 0 => {
                let i = rng.below(n);
                data[i] ^= 1 << rng.below(8);
            }
            1 if n > 0 => {
                let i = rng.below(n);
                data[i] = rng.next() as u8;
            }
            2 if n > 1 => {
                let at = rng.below(n);
                let len = rng.below((n - at).min(256)) + 1;
                data.drain(at..at + len);
            }
            3 if n > 1 => {
                let at = rng.below(n);
                let len = rng.below((n - at).min(256)) + 1;
                let copy = data[at..at + len].to_vec();
                let to = rng.below(n);
                data.splice(to..to, copy);
            }
            4 if n > 0 => data.truncate(rng.below(n)),
            // A width, height or length field near the header: 0, 1, 0xFFFF or 0xFFFFFFFF, either byte order.
            _ if n > 4 => {
                let at = rng.below(n.min(64) - 3);
                let value = [0u32, 1, 0xFFFF, 0xFFFF_FFFF, 100_000][rng.below(5)];
                let bytes = if rng.below(2) == 0 { value.to_be_bytes() } else { value.to_le_bytes() };
                data[at..at + 4].copy_from_slice(&bytes);
            }
            _ => {}
        }
    }
    data
}

#[test]
fn image_fuzz() {
    let worker = Worker::new();
    let mut inputs = Vec::new();
    if let Ok(replay) = std::env::var("UFORM_FUZZ_REPLAY") {
        inputs = read_inputs(Path::new(&replay));
    } else {
        for dir in ["fuzz/corpus/image_pixels", "tests/fixtures/images/files", "tests/fixtures/images/hostile"] {
            inputs.extend(read_inputs(&root().join(dir)));
        }
    }
    for (path, data) in &inputs {
        if let Err(why) = worker.run(data) {
            fail(&why, data, &format!("replaying {}", path.display()));
        }
    }
    let seconds = env_u64("UFORM_FUZZ_SECONDS", 3);
    if seconds == 0 || std::env::var("UFORM_FUZZ_REPLAY").is_ok() {
        return;
    }
    let clock = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let seed = env_u64("UFORM_FUZZ_SEED", clock | 1);
    eprintln!("image_fuzz: seed {seed} (UFORM_FUZZ_SEED={seed} replays it), {seconds} s");
    let mut rng = Rng(seed);
    let (start, mut runs, mut decoded) = (Instant::now(), 0u64, 0u64);
    while start.elapsed() < Duration::from_secs(seconds) {
        let (path, input) = &inputs[rng.below(inputs.len())];
        let data = mutate(&mut rng, input);
        match worker.run(&data) {
            Ok(ok) => decoded += u64::from(ok),
            Err(why) => fail(&why, &data, &format!("seed {seed}, a mutant of {}", path.display())),
        }
        runs += 1;
    }
    eprintln!("image_fuzz: {runs} mutants, {decoded} decoded");
}
