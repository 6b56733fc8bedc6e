//! libFuzzer target: arbitrary bytes as a safetensors file through `uform_core::model::header` (the parser
//! `Model.loadRam` and `Model.loadVram` check every file with), compared with the `safetensors` crate. The stable
//! harness, `core/tests/safetensors_fuzz.rs`, runs the same checks. A panic, an accepted header whose tensors do not
//! tile the data, or a disagreement with the crate (save a duplicated name, which only uform rejects) is a crash.
#![no_main]

use uform_core::model::header;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let accepted = header::fuzz_one(data);
    let theirs = safetensors::SafeTensors::read_metadata(data).ok();
    match (header::parse(data), theirs) {
        (Ok(h), Some((_, metadata))) => {
            assert!(accepted);
            let mut ours: Vec<_> = h.tensors.iter().map(|t| (t.name.clone(), t.begin, t.end)).collect();
            let mut crate_: Vec<_> = metadata
                .tensors()
                .into_iter()
                .map(|(name, info)| (name, info.data_offsets.0 as u64, info.data_offsets.1 as u64))
                .collect();
            ours.sort();
            crate_.sort();
            assert_eq!(ours, crate_, "the parsers disagree on the tensors");
        }
        (Err(e), Some(_)) => assert!(e.contains(" twice"), "the safetensors crate accepts what uform rejects: {e}"),
        (Ok(_), None) => panic!("uform accepts what the safetensors crate rejects"),
        (Err(_), None) => {}
    }
});
