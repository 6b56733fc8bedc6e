//! The stable fuzz harness for the image decoder (`uform_core::families::pixels`): replays every committed corpus
//! file (`fuzz/corpus/image_pixels/`) and the committed images (tests/fixtures/images/files/ and hostile/), then
//! mutates them for a few seconds: byte flips and overwrites, a range deleted or duplicated, a cut, and a header's
//! 32-bit field set to an extreme. Each input goes through `Preprocess::pixels` with the CLIP crop config, as the
//! libFuzzer target (`fuzz/fuzz_targets/image_pixels.rs`) does: a panic that escapes, an error that is not an
//! invalid argument naming `images[0]`, non-finite accepted pixels or an input slower than the limit fails, and the
//! input is written under `fuzz/artifacts/image_pixels/`. A decoder panic that `pixels` catches is counted and
//! printed, not failed. The worker, the failure report, the corpus reader and the generator are the shared ones in
//! `support/fuzz.rs`. See `fuzz/README.md`.
//!
//! Environment: `UFORM_FUZZ_SECONDS` (mutation time, default 3; 0 skips it), `UFORM_FUZZ_SEED` (default from the
//! clock; printed), `UFORM_FUZZ_TIMEOUT_MS` (per input, default 5000), `UFORM_FUZZ_REPLAY` (a file or folder to
//! replay instead of the corpus).

mod support;

use support::fuzz::{clock, env_u64, for_time, read_inputs, replay, root, Rng, Target};
use uform_core::error::ErrorKind;
use uform_core::families::pixels::Preprocess;

const TARGET: Target =
    Target { name: "image_pixels", test: "image_fuzz", seconds: 3, timeout_ms: 5000, show_input: false };

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
    let config = root().join("tests/fixtures/images/crops/clip/preprocessor_config.json");
    let processor = Preprocess::read(&config).unwrap();
    let worker = TARGET.worker(move |data| run_one(&processor, data));
    let mut inputs = Vec::new();
    if let Some(replay) = replay() {
        inputs = read_inputs(&replay);
    } else {
        inputs.extend(read_inputs(&TARGET.corpus()));
        for dir in ["tests/fixtures/images/files", "tests/fixtures/images/hostile"] {
            inputs.extend(read_inputs(&root().join(dir)));
        }
    }
    for (path, data) in &inputs {
        if let Err(why) = worker.run(data) {
            TARGET.fail(&why, data, &format!("replaying {}", path.display()));
        }
    }
    let Some(time) = TARGET.mutation_time() else { return };
    let seed = env_u64("UFORM_FUZZ_SEED", clock() | 1);
    eprintln!("image_fuzz: seed {seed} (UFORM_FUZZ_SEED={seed} replays it), {} s", time.as_secs());
    let mut rng = Rng(seed);
    let mut decoded = 0u64;
    let (runs, _) = for_time(time, |_| {
        let (path, input) = &inputs[rng.below(inputs.len())];
        let data = mutate(&mut rng, input);
        match worker.run(&data) {
            Ok(ok) => decoded += u64::from(ok),
            Err(why) => TARGET.fail(&why, &data, &format!("seed {seed}, a mutant of {}", path.display())),
        }
    });
    eprintln!("image_fuzz: {runs} mutants, {decoded} decoded");
}
