//! The stable fuzz harness for the IDL loader: replays every committed corpus file (`fuzz/corpus/idl_loader/`), then
//! mutates the corpus for a few seconds, each input through [`uform_codegen::fuzz::fuzz_one`] — the function the
//! libFuzzer target calls — on a worker thread, failing on a panic (even one the loader contains) or on an input
//! that takes longer than the time limit. A failing input is written under `fuzz/artifacts/idl_loader/` and its path
//! printed. See `fuzz/README.md`.
//!
//! Environment: `UFORM_FUZZ_SECONDS` (mutation time, default 20; 0 skips it), `UFORM_FUZZ_SEED` (the mutation seed,
//! default from the clock; printed either way), `UFORM_FUZZ_TIMEOUT_MS` (per input, default 2000),
//! `UFORM_FUZZ_REPLAY` (a file or folder to replay instead of the corpus).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use uform_codegen::fuzz::{fuzz_one, Outcome};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Running one input with a panic trap and a time limit.

thread_local! {
    /// Set on the worker thread: the first panic seen while running an input, caught or not.
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    static IS_WORKER: RefCell<bool> = const { RefCell::new(false) };
}

/// Routes panics on worker threads into [`PANIC`] (quietly: a failing run prints its own report); other threads keep
/// the default hook, so the test's own assertions print as usual.
fn install_panic_trap() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IS_WORKER.with(|w| *w.borrow()) {
                let location = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
                let payload = info.payload();
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                PANIC.with(|p| p.borrow_mut().get_or_insert(format!("{message}{location}")).len());
            } else {
                default(info);
            }
        }));
    });
}

enum Failure {
    Panic(String),
    Hang(Duration),
}

/// A thread that runs inputs one at a time; a hang leaves it stuck, so the caller stops at the first failure.
struct Worker {
    send: mpsc::Sender<Vec<u8>>,
    recv: mpsc::Receiver<Result<Outcome, String>>,
    limit: Duration,
}

impl Worker {
    fn new() -> Worker {
        install_panic_trap();
        let (send, inputs) = mpsc::channel::<Vec<u8>>();
        let (results, recv) = mpsc::channel();
        std::thread::Builder::new()
            .name("fuzz-worker".into())
            // The main thread's stack, which `cargo xtask codegen` and the libFuzzer target run the pipeline on.
            .stack_size(8 << 20)
            .spawn(move || {
                IS_WORKER.with(|w| *w.borrow_mut() = true);
                for data in inputs {
                    PANIC.with(|p| p.borrow_mut().take());
                    let outcome = std::panic::catch_unwind(|| fuzz_one(&data));
                    let panic = PANIC.with(|p| p.borrow_mut().take());
                    let result = match (outcome, panic) {
                        (Ok(o), None) => Ok(o),
                        (Ok(_), Some(message)) => Err(format!("a contained panic: {message}")),
                        (Err(_), message) => Err(message.unwrap_or_else(|| "a panic".into())),
                    };
                    if results.send(result).is_err() {
                        break;
                    }
                }
            })
            .expect("spawn the fuzz worker");
        Worker { send, recv, limit: Duration::from_millis(env_u64("UFORM_FUZZ_TIMEOUT_MS", 2000)) }
    }

    fn run(&self, data: &[u8]) -> Result<Outcome, Failure> {
        let start = Instant::now();
        self.send.send(data.to_vec()).expect("the fuzz worker is gone");
        match self.recv.recv_timeout(self.limit) {
            Ok(Ok(outcome)) => Ok(outcome),
            Ok(Err(message)) => Err(Failure::Panic(message)),
            Err(_) => Err(Failure::Hang(start.elapsed())),
        }
    }
}

/// Writes the failing input where cargo-fuzz puts its crashes (unless it came from a file) and returns a report
/// naming it.
fn report(kind: &str, failure: &Failure, data: &[u8], context: &str, from: Option<&Path>) -> String {
    let why = match failure {
        Failure::Panic(message) => format!("panicked: {message}"),
        Failure::Hang(t) => format!("ran past the time limit ({} ms and counting)", t.as_millis()),
    };
    let dir = root().join("fuzz/artifacts/idl_loader");
    let file = dir.join(format!("stable-{kind}-{:016x}", fnv(data)));
    let written = match from {
        Some(path) => Ok(path.to_path_buf()),
        None => std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, data)).map(|_| file.clone()),
    };
    let saved = match written {
        Ok(file) => format!(
            "in {}\nreplay: UFORM_FUZZ_REPLAY={} cargo test -p uform-codegen --test fuzz_corpus",
            file.display(),
            file.display()
        ),
        Err(e) => format!("could not save it to {}: {e}", file.display()),
    };
    let shown = if data.len() <= 4096 {
        format!("{:?}", String::from_utf8_lossy(data))
    } else {
        format!("({} bytes)", data.len())
    };
    format!("the pipeline {why}\n{context}\n{saved}\ninput: {shown}")
}

fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3))
}

// ---------------------------------------------------------------------------------------------------------------
// The corpus and the dictionary.

fn corpus_dir() -> PathBuf {
    root().join("fuzz/corpus/idl_loader")
}

fn read_inputs(path: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<PathBuf> = if path.is_dir() {
        std::fs::read_dir(path)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", path.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect()
    } else {
        vec![path.to_path_buf()]
    };
    files.sort();
    files
        .into_iter()
        .map(|p| (p.clone(), std::fs::read(&p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))))
        .collect()
}

/// The entries of a libFuzzer dictionary: `"value"` or `name="value"` lines with `\\`, `\"` and `\xNN` escapes.
fn read_dictionary(path: &Path) -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut entries = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let quoted = line.find('"').map(|i| &line[i..]).filter(|q| q.len() >= 2 && q.ends_with('"'));
        let Some(quoted) = quoted else { panic!("{}:{}: not a dictionary entry: {line}", path.display(), n + 1) };
        let body = &quoted.as_bytes()[1..quoted.len() - 1];
        let mut value = Vec::new();
        let mut i = 0;
        while i < body.len() {
            match (body[i], body.get(i + 1)) {
                (b'\\', Some(b'x')) => {
                    let hex = std::str::from_utf8(&body[i + 2..(i + 4).min(body.len())]).unwrap_or("");
                    let byte = u8::from_str_radix(hex, 16)
                        .unwrap_or_else(|_| panic!("{}:{}: bad \\x escape", path.display(), n + 1));
                    value.push(byte);
                    i += 4;
                }
                (b'\\', Some(&c)) => {
                    value.push(c);
                    i += 2;
                }
                (c, _) => {
                    value.push(c);
                    i += 1;
                }
            }
        }
        entries.push(value);
    }
    entries
}

// ---------------------------------------------------------------------------------------------------------------
// Mutations: the byte-level ones libFuzzer also does, and line-level ones that keep YAML's shape.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
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

const MAX_LEN: usize = 64 * 1024;
const INTERESTING: &[u8] = b"{}[]:-,\n \"'&*!|>#?@%\t\r\\0x9aZ_.<~";

/// Byte ranges of the lines of `data`, each with its line break.
fn lines(data: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in data.iter().enumerate() {
        if b == b'\n' {
            out.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < data.len() {
        out.push((start, data.len()));
    }
    out
}

fn mutate(rng: &mut Rng, data: &mut Vec<u8>, pool: &[Vec<u8>], dictionary: &[Vec<u8>]) {
    let pos = |rng: &mut Rng, data: &Vec<u8>| rng.below(data.len() + 1);
    match rng.below(12) {
        // flip a bit
        0 if !data.is_empty() => {
            let at = rng.below(data.len());
            data[at] ^= 1 << rng.below(8);
        }
        // overwrite a byte with YAML punctuation or any byte
        1 if !data.is_empty() => {
            let at = rng.below(data.len());
            data[at] = if rng.below(4) == 0 { rng.next() as u8 } else { INTERESTING[rng.below(INTERESTING.len())] };
        }
        // insert a byte
        2 => {
            let at = pos(rng, data);
            data.insert(at, INTERESTING[rng.below(INTERESTING.len())]);
        }
        // delete a short range
        3 if !data.is_empty() => {
            let at = rng.below(data.len());
            let end = (at + 1 + rng.below(16)).min(data.len());
            data.drain(at..end);
        }
        // insert a dictionary token anywhere
        4 | 5 if !dictionary.is_empty() => {
            let token = &dictionary[rng.below(dictionary.len())];
            let at = pos(rng, data);
            data.splice(at..at, token.iter().copied());
        }
        // replace the value after a `: ` with a dictionary token
        6 if !dictionary.is_empty() => {
            let ls = lines(data);
            if let Some(&(s, e)) = ls.get(rng.below(ls.len())) {
                if let Some(colon) = data[s..e].windows(2).position(|w| w == b": ") {
                    let from = s + colon + 2;
                    let to = if data[e - 1] == b'\n' { e - 1 } else { e };
                    let token = &dictionary[rng.below(dictionary.len())];
                    data.splice(from..to.max(from), token.iter().copied());
                }
            }
        }
        // delete a line
        7 => {
            let ls = lines(data);
            if let Some(&(s, e)) = ls.get(rng.below(ls.len())) {
                data.drain(s..e);
            }
        }
        // duplicate a run of lines in place
        8 => {
            let ls = lines(data);
            if !ls.is_empty() {
                let first = rng.below(ls.len());
                let last = (first + rng.below(6)).min(ls.len() - 1);
                let copy = data[ls[first].0..ls[last].1].to_vec();
                data.splice(ls[first].0..ls[first].0, copy);
            }
        }
        // splice in a run of lines from another input
        9 if !pool.is_empty() => {
            let other = &pool[rng.below(pool.len())];
            let theirs = lines(other);
            let ours = lines(data);
            if !theirs.is_empty() {
                let first = rng.below(theirs.len());
                let last = (first + rng.below(12)).min(theirs.len() - 1);
                let at = ours.get(rng.below(ours.len() + 1)).map_or(data.len(), |l| l.0);
                data.splice(at..at, other[theirs[first].0..theirs[last].1].iter().copied());
            }
        }
        // swap two lines
        10 => {
            let ls = lines(data);
            if ls.len() >= 2 {
                let (a, b) = (rng.below(ls.len()), rng.below(ls.len()));
                let (a, b) = (ls[a.min(b)], ls[a.max(b)]);
                if a != b {
                    let mut out = data[..a.0].to_vec();
                    out.extend_from_slice(&data[b.0..b.1]);
                    out.extend_from_slice(&data[a.1..b.0]);
                    out.extend_from_slice(&data[a.0..a.1]);
                    out.extend_from_slice(&data[b.1..]);
                    *data = out;
                }
            }
        }
        // indent or outdent a line by two spaces
        _ => {
            let ls = lines(data);
            if let Some(&(s, e)) = ls.get(rng.below(ls.len())) {
                if rng.below(2) == 0 {
                    data.splice(s..s, *b"  ");
                } else if data[s..e].starts_with(b"  ") {
                    data.drain(s..s + 2);
                }
            }
        }
    }
    data.truncate(MAX_LEN);
}

// ---------------------------------------------------------------------------------------------------------------
// The tests.

#[test]
fn the_dictionary_parses() {
    let entries = read_dictionary(&root().join("fuzz/idl.dict"));
    assert!(entries.len() > 50, "{} entries", entries.len());
    assert!(
        entries.contains(&b"\n  - ".to_vec()) && entries.contains(&vec![0xff]) && entries.contains(&b"\"".to_vec())
    );
}

#[test]
fn the_mutations_stay_in_bounds() {
    let mut rng = Rng(7);
    let pool = vec![b"a: b\n  - c\n".to_vec(), Vec::new()];
    let dictionary = vec![b"x: ".to_vec()];
    for round in 0..20_000 {
        let mut data = pool[round % 2].clone();
        for _ in 0..1 + round % 5 {
            mutate(&mut rng, &mut data, &pool, &dictionary);
        }
        assert!(data.len() <= MAX_LEN);
    }
}

/// Every committed corpus file (or `UFORM_FUZZ_REPLAY`), and the real IDL, runs clean.
#[test]
fn the_corpus_replays_clean() {
    let inputs = match std::env::var_os("UFORM_FUZZ_REPLAY") {
        Some(path) => read_inputs(Path::new(&path)),
        None => {
            let mut inputs = read_inputs(&corpus_dir());
            assert!(inputs.len() >= 20, "the corpus in {} has only {} files", corpus_dir().display(), inputs.len());
            inputs.extend(read_inputs(&root().join("idl/uform.yaml")));
            inputs
        }
    };
    let worker = Worker::new();
    let (mut rendered, start, mut slowest) = (0, Instant::now(), (Duration::ZERO, PathBuf::new()));
    for (path, data) in &inputs {
        let one = Instant::now();
        let result = worker.run(data);
        if one.elapsed() > slowest.0 {
            slowest = (one.elapsed(), path.clone());
        }
        match result {
            Ok(Outcome::Rendered { .. }) => rendered += 1,
            Ok(Outcome::Rejected { .. }) => {}
            Err(failure) => {
                panic!("{}", report("replay", &failure, data, &format!("replaying {}", path.display()), Some(path)))
            }
        }
    }
    eprintln!(
        "fuzz replay: {} inputs ({rendered} rendered) in {:.1?}; slowest {:.1?} ({})",
        inputs.len(),
        start.elapsed(),
        slowest.0,
        slowest.1.display()
    );
    assert!(std::env::var_os("UFORM_FUZZ_REPLAY").is_some() || rendered > 0, "no corpus input reached the renderers");
}

/// A time-bounded mutational run from the corpus: `UFORM_FUZZ_SECONDS` (default 20) seconds.
#[test]
fn mutated_corpus_inputs_run_clean() {
    let seconds = env_u64("UFORM_FUZZ_SECONDS", 20);
    if seconds == 0 || std::env::var_os("UFORM_FUZZ_REPLAY").is_some() {
        return;
    }
    let seed = env_u64(
        "UFORM_FUZZ_SEED",
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64,
    ) | 1;
    let mut pool: Vec<Vec<u8>> = read_inputs(&corpus_dir()).into_iter().map(|(_, d)| d).collect();
    pool.push(std::fs::read(root().join("idl/uform.yaml")).unwrap());
    let seeds = pool.len();
    let dictionary = read_dictionary(&root().join("fuzz/idl.dict"));
    let worker = Worker::new();
    let mut rng = Rng(seed);
    let (start, deadline) = (Instant::now(), Duration::from_secs(seconds));
    let (mut execs, mut rendered) = (0u64, 0u64);
    while start.elapsed() < deadline {
        let mut data = pool[rng.below(pool.len())].clone();
        let stack = 1 + rng.below(4);
        for _ in 0..stack {
            mutate(&mut rng, &mut data, &pool, &dictionary);
        }
        execs += 1;
        match worker.run(&data) {
            Ok(Outcome::Rendered { .. }) => {
                rendered += 1;
                // Inputs that get through the checker reach the renderers: keep a few to mutate further.
                if pool.len() < seeds + 256 {
                    pool.push(data);
                } else {
                    let slot = seeds + rng.below(256);
                    pool[slot] = data;
                }
            }
            Ok(Outcome::Rejected { .. }) => {}
            Err(failure) => {
                let context =
                    format!("mutation run: seed {seed} (UFORM_FUZZ_SEED={seed} replays the run), exec {execs}");
                panic!("{}", report("mutant", &failure, &data, &context, None));
            }
        }
    }
    eprintln!(
        "fuzz mutation: seed {seed}, {execs} execs in {:.1?} ({:.0}/s), {rendered} rendered, pool {} ({} kept mutants)",
        start.elapsed(),
        execs as f64 / start.elapsed().as_secs_f64(),
        pool.len(),
        pool.len() - seeds
    );
}
