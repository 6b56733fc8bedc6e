//! The stable fuzz harness for the safetensors header parser (`uform_core::model::header`): replays every committed
//! corpus file (`fuzz/corpus/safetensors_header/`), then mutates the corpus and freshly generated files for a few
//! seconds. Each input runs through [`header::fuzz_one`] — the function the libFuzzer target
//! (`fuzz/fuzz_targets/safetensors_header.rs`) calls — and against the `safetensors` crate as an oracle: both must
//! accept the same inputs with the same tensors (save a duplicated name, which only this parser rejects). A panic, a
//! disagreement or an input slower than the limit fails; the input is written under
//! `fuzz/artifacts/safetensors_header/` and its path printed. The worker, the failure report, the corpus reader and
//! the generator are the shared ones in `support/fuzz.rs`. See `fuzz/README.md`.
//!
//! Environment: `UFORM_FUZZ_SECONDS` (mutation time, default 5; 0 skips it), `UFORM_FUZZ_SEED` (default from the
//! clock; printed), `UFORM_FUZZ_TIMEOUT_MS` (per input, default 2000), `UFORM_FUZZ_REPLAY` (a file or folder to
//! replay instead of the corpus).

mod support;

use support::fuzz::{clock, env_u64, for_time, read_inputs, replay, Rng, Target};
use uform_core::model::header;

const TARGET: Target =
    Target { name: "safetensors_header", test: "safetensors_fuzz", seconds: 5, timeout_ms: 2000, show_input: true };

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
    let replay = replay();
    let dir = TARGET.corpus();
    let inputs = read_inputs(replay.as_deref().unwrap_or(&dir));
    assert!(replay.is_some() || inputs.len() >= 20, "the corpus in {} has {} files", dir.display(), inputs.len());
    let worker = TARGET.worker(run_one);
    let mut accepted = 0;
    for (path, data) in &inputs {
        match worker.run(data) {
            Ok(a) => accepted += a as usize,
            Err(why) => TARGET.fail(&why, data, &format!("replaying {}", path.display())),
        }
    }
    eprintln!("safetensors fuzz replay: {} inputs, {accepted} accepted", inputs.len());
    assert!(replay.is_some() || (accepted > 0 && accepted < inputs.len()), "the corpus must hold good and bad files");
}

#[test]
fn mutated_inputs_run_clean() {
    let Some(time) = TARGET.mutation_time() else { return };
    let seed = env_u64("UFORM_FUZZ_SEED", clock()) | 1;
    let mut pool: Vec<Vec<u8>> = read_inputs(&TARGET.corpus()).into_iter().map(|(_, d)| d).collect();
    let worker = TARGET.worker(run_one);
    let mut rng = Rng(seed);
    let mut accepted = 0u64;
    let (execs, took) = for_time(time, |exec| {
        let mut data =
            if pool.is_empty() || rng.below(4) == 0 { generate(&mut rng) } else { pool[rng.below(pool.len())].clone() };
        for _ in 0..1 + rng.below(3) {
            mutate(&mut rng, &mut data);
        }
        match worker.run(&data) {
            Ok(true) => {
                accepted += 1;
                if pool.len() < 512 {
                    pool.push(data);
                }
            }
            Ok(false) => {}
            Err(why) => TARGET.fail(&why, &data, &format!("mutation run: UFORM_FUZZ_SEED={seed}, exec {exec}")),
        }
    });
    eprintln!("safetensors fuzz: seed {seed}, {execs} execs in {took:.1?}, {accepted} accepted");
    assert!(accepted > 0, "no mutant was a valid file: the mutator is broken");
}
