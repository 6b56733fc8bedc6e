//! libFuzzer target: arbitrary bytes through the whole IDL pipeline (load → check → model → every language's
//! files). The same function runs in the stable harness, `codegen/tests/fuzz_corpus.rs`. A panic anywhere — even
//! one the loader catches, since libfuzzer-sys aborts on every panic — is a crash; `-timeout` catches hangs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    uform_codegen::fuzz::fuzz_one(data);
});
