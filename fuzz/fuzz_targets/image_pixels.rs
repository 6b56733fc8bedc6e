//! libFuzzer target: arbitrary bytes as `images[0]` through `uform_core::families::pixels::Preprocess::pixels`
//! with the CLIP crop config (tests/fixtures/images/crops/clip/, 64 x 64). The stable harness,
//! `core/tests/image_fuzz.rs`, runs the same checks. It fails on a panic (libfuzzer-sys aborts on any panic, so a
//! decoder panic that `pixels` would catch and report still shows here), an error that is not an invalid argument
//! naming `images[0]`, or accepted pixels that are not finite.
#![no_main]

use std::sync::OnceLock;
use uform_core::error::ErrorKind;
use uform_core::families::pixels::Preprocess;

fn clip() -> &'static Preprocess {
    static CLIP: OnceLock<Preprocess> = OnceLock::new();
    CLIP.get_or_init(|| {
        let config = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/images/crops/clip/preprocessor_config.json");
        Preprocess::read(std::path::Path::new(config)).expect("the CLIP crop config")
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut out = vec![f32::NAN; 3 * 64 * 64];
    match clip().pixels(data, 0, &mut out) {
        Ok(()) => assert!(out.iter().all(|v| v.is_finite()), "accepted pixels that are not finite"),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
            assert!(e.message().starts_with("`images[0]` "), "{e}");
        }
    }
});
