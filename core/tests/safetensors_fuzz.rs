//! The stable fuzz harness for the safetensors header parser (`uform_core::model::header`): replays every committed
//! corpus file (`fuzz/corpus/safetensors_header/`), then mutates the corpus and freshly generated files for a few
//! seconds. Each input runs through [`header::fuzz_one`] — the function the libFuzzer target
//! (`fuzz/fuzz_targets/safetensors_header.rs`) calls — and against the `safetensors` crate as an oracle: both must
//! accept the same inputs with the same tensors (save a duplicated name, which only this parser rejects). A panic, a
//! disagreement or an input slower than the limit fails; the input is written under
//! `fuzz/artifacts/safetensors_header/` and its path printed. See `fuzz/README.md`.
//!
//! Environment: `UFORM_FUZZ_SECONDS` (mutation time, default 5; 0 skips it), `UFORM_FUZZ_SEED` (default from the
//! clock; printed), `UFORM_FUZZ_TIMEOUT_MS` (per input, default 2000), `UFORM_FUZZ_REPLAY` (a file or folder to
//! replay instead of the corpus).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use uform_core::model::header;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |v| v.trim().parse().unwrap_or_else(|_| panic!("{name}={v:?} is not a number")))
}

type Tensors = Vec<(String, String, Vec<u64>, u64, u64)>;

/// The crate's reading of `data`: the tensors sorted by offsets then name, or `None` when it rejects the file.
fn oracle(data: &[u8]) -> Option<Tensors> {
    let (_, metadata) = safetensors::SafeTensors::read_metadata(data).ok()?;
    let mut out: Tensors = metadata
        .tensors()
        .into_iter()
        .map(|(name, info)| {
            let shape = info.shape.iter().map(|&d| d as u64).collect();
            (name, format!("{:?}", info.dtype), shape, info.data_offsets.0 as u64, info.data_offsets.1 as u64)
        })
        .collect();
    out.sort_by(|a, b| (a.3, a.4, &a.0).cmp(&(b.3, b.4, &b.0)));
    Some(out)
}

/// One input: the parser's own promises, then agreement with the oracle. `Ok(accepted)` or a failure report.
fn run_one(data: &[u8]) -> Result<bool, String> {
    let accepted = std::panic::catch_unwind(|| header::fuzz_one(data)).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })?;
    let ours = header::parse(data);
    let theirs = oracle(data);
    match (&ours, &theirs) {
        (Ok(h), Some(t)) => {
            let mut mine: Tensors = h
                .tensors
                .iter()
                .map(|e| (e.name.clone(), e.dtype.to_string(), e.shape.clone(), e.begin, e.end))
                .collect();
            mine.sort_by(|a, b| (a.3, a.4, &a.0).cmp(&(b.3, b.4, &b.0)));
            if &mine != t {
                return Err(format!("the parsers disagree on the tensors:\n ours   {mine:?}\n theirs {t:?}"));
            }
        }
        (Err(e), Some(_)) if e.contains(" twice") => {}
        (Err(e), Some(_)) => return Err(format!("the safetensors crate accepts what this parser rejects: {e}")),
        (Ok(_), None) => return Err("this parser accepts what the safetensors crate rejects".into()),
        (Err(_), None) => {}
    }
    Ok(accepted)
}

/// Runs inputs on a worker thread so a hang is caught by a time limit.
struct Worker {
    send: mpsc::Sender<Vec<u8>>,
    recv: mpsc::Receiver<Result<bool, String>>,
    limit: Duration,
}

impl Worker {
    fn new() -> Worker {
        let (send, inputs) = mpsc::channel::<Vec<u8>>();
        let (results, recv) = mpsc::channel();
        std::thread::spawn(move || {
            for data in inputs {
                if results.send(run_one(&data)).is_err() {
                    break;
                }
            }
        });
        Worker { send, recv, limit: Duration::from_millis(env_u64("UFORM_FUZZ_TIMEOUT_MS", 2000)) }
    }
    fn run(&self, data: &[u8]) -> Result<bool, String> {
        self.send.send(data.to_vec()).unwrap();
        self.recv.recv_timeout(self.limit).unwrap_or_else(|_| Err(format!("ran past {:?}", self.limit)))
    }
}

fn fail(why: &str, data: &[u8], context: &str) -> ! {
    let dir = root().join("fuzz/artifacts/safetensors_header");
    let hash = data.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3));
    let file = dir.join(format!("stable-{hash:016x}"));
    let _ = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, data));
    panic!(
        "{why}\n{context}\nsaved in {}\nreplay: UFORM_FUZZ_REPLAY={} cargo test -p uform-core --test safetensors_fuzz\ninput: {:?}",
        file.display(),
        file.display(),
        String::from_utf8_lossy(&data[..data.len().min(2048)])
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

const TOKENS: &[&str] = &[
    "\"dtype\"",
    "\"shape\"",
    "\"data_offsets\"",
    "\"__metadata__\"",
    "\"F32\"",
    "\"BF16\"",
    "\"F4\"",
    "\"F6_E2M3\"",
    "\"I64\"",
    "\"BOOL\"",
    "\"C64\"",
    "[]",
    "[0]",
    "[1,2]",
    "[0,0]",
    "[4,8]",
    "null",
    "{}",
    ":",
    ",",
    "-1",
    "1e3",
    "18446744073709551615",
    "18446744073709551616",
    "\"a\"",
    "\"\\u0000\"",
    " ",
];

/// A valid file of random tensors (some zero-sized, sub-byte dtypes included), for the mutator to start from.
fn generate(rng: &mut Rng) -> Vec<u8> {
    let mut entries = Vec::new();
    let mut offset = 0u64;
    for i in 0..rng.below(6) {
        let (dtype, bits) = header::DTYPES[rng.below(header::DTYPES.len())];
        let shape: Vec<u64> = (0..rng.below(4)).map(|_| rng.below(5) as u64).collect();
        let elements: u64 = shape.iter().product();
        let elements = if (elements * bits).is_multiple_of(8) { elements } else { continue };
        let end = offset + elements * bits / 8;
        entries.push(format!(r#""t{i}":{{"dtype":"{dtype}","shape":{shape:?},"data_offsets":[{offset},{end}]}}"#));
        offset = end;
    }
    if rng.below(2) == 0 {
        entries.push(r#""__metadata__":{"format":"pt"}"#.into());
    }
    let n = entries.len();
    for i in 0..n {
        let j = i + rng.below(n - i);
        entries.swap(i, j);
    }
    let header = format!("{{{}}}", entries.join(","));
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend((0..offset).map(|b| b as u8));
    out
}

/// Rewrites the 8-byte length to match the header text again, after a mutation moved it.
fn fix_length(data: &mut [u8]) {
    if data.len() >= 8 {
        if let Some(end) = data[8..].iter().rposition(|&b| b == b'}') {
            data[..8].copy_from_slice(&((end + 1) as u64).to_le_bytes());
        }
    }
}

fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    let at = |rng: &mut Rng, d: &Vec<u8>| rng.below(d.len() + 1);
    match rng.below(9) {
        0 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] ^= 1 << rng.below(8);
        }
        1 if !data.is_empty() => {
            let i = rng.below(data.len());
            let end = (i + 1 + rng.below(12)).min(data.len());
            data.drain(i..end);
            fix_length(data);
        }
        2 | 3 => {
            let i = at(rng, data).max(8.min(data.len()));
            let token = TOKENS[rng.below(TOKENS.len())].as_bytes();
            data.splice(i..i, token.iter().copied());
            fix_length(data);
        }
        4 if data.len() >= 8 => {
            let n = u64::from_le_bytes(data[..8].try_into().unwrap());
            let n = match rng.below(4) {
                0 => n.wrapping_add(rng.below(16) as u64).wrapping_sub(8),
                1 => rng.next(),
                2 => 100_000_000 + rng.below(2) as u64,
                _ => data.len() as u64 - 8 + rng.below(3) as u64,
            };
            data[..8].copy_from_slice(&n.to_le_bytes());
        }
        5 => {
            let extra = rng.below(9);
            if rng.below(2) == 0 {
                data.extend((0..extra).map(|_| rng.next() as u8));
            } else {
                data.truncate(data.len().saturating_sub(extra));
            }
        }
        6 if data.len() > 8 => {
            // change a number in the header
            let digits: Vec<usize> = (8..data.len()).filter(|&i| data[i].is_ascii_digit()).collect();
            if !digits.is_empty() {
                let i = digits[rng.below(digits.len())];
                data[i] = b'0' + rng.below(10) as u8;
            }
        }
        _ => *data = generate(rng),
    }
    data.truncate(1 << 16);
}

#[test]
fn the_corpus_replays_clean() {
    let replay = std::env::var_os("UFORM_FUZZ_REPLAY");
    let dir = root().join("fuzz/corpus/safetensors_header");
    let inputs = match &replay {
        Some(p) => read_inputs(Path::new(p)),
        None => read_inputs(&dir),
    };
    assert!(replay.is_some() || inputs.len() >= 20, "the corpus in {} has {} files", dir.display(), inputs.len());
    let worker = Worker::new();
    let mut accepted = 0;
    for (path, data) in &inputs {
        match worker.run(data) {
            Ok(a) => accepted += a as usize,
            Err(why) => fail(&why, data, &format!("replaying {}", path.display())),
        }
    }
    eprintln!("safetensors fuzz replay: {} inputs, {accepted} accepted", inputs.len());
    assert!(replay.is_some() || (accepted > 0 && accepted < inputs.len()), "the corpus must hold good and bad files");
}

#[test]
fn mutated_inputs_run_clean() {
    let seconds = env_u64("UFORM_FUZZ_SECONDS", 5);
    if seconds == 0 || std::env::var_os("UFORM_FUZZ_REPLAY").is_some() {
        return;
    }
    let clock = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let seed = env_u64("UFORM_FUZZ_SEED", clock) | 1;
    let mut pool: Vec<Vec<u8>> =
        read_inputs(&root().join("fuzz/corpus/safetensors_header")).into_iter().map(|(_, d)| d).collect();
    let worker = Worker::new();
    let mut rng = Rng(seed);
    let (start, mut execs, mut accepted) = (Instant::now(), 0u64, 0u64);
    while start.elapsed() < Duration::from_secs(seconds) {
        let mut data =
            if pool.is_empty() || rng.below(4) == 0 { generate(&mut rng) } else { pool[rng.below(pool.len())].clone() };
        for _ in 0..1 + rng.below(3) {
            mutate(&mut rng, &mut data);
        }
        execs += 1;
        match worker.run(&data) {
            Ok(true) => {
                accepted += 1;
                if pool.len() < 512 {
                    pool.push(data);
                }
            }
            Ok(false) => {}
            Err(why) => fail(&why, &data, &format!("mutation run: UFORM_FUZZ_SEED={seed}, exec {execs}")),
        }
    }
    eprintln!("safetensors fuzz: seed {seed}, {execs} execs in {:.1?}, {accepted} accepted", start.elapsed());
    assert!(accepted > 0, "no mutant was a valid file: the mutator is broken");
}
