//! CLIP and SigLIP against transformers, on the random-weight checkpoints and references that
//! tests/fixtures/images/make_images.py made.

use super::forward::pooled_position;
use super::params::Variant;
use super::ImageText;
use crate::error::ErrorKind;
use crate::executor::Executor;
use crate::kernels::Kernels;
use crate::model::RamWeights;
use crate::types::Precision;
use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/images");

fn reference() -> Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{FIXTURES}/reference.json")).unwrap()).unwrap()
}

fn weights(name: &str) -> RamWeights {
    let path = format!("{FIXTURES}/{name}");
    RamWeights::new(crate::model::source::open(&path, None, &mut |_| {}).unwrap()).unwrap()
}

fn executor() -> Executor {
    Executor::for_ram(crate::ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap()
}

fn rows(json: &Value) -> Vec<Vec<f32>> {
    json.as_array()
        .unwrap()
        .iter()
        .map(|row| row.as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect())
        .collect()
}

/// The two pixel tensors of make_images.py's `pixels(phase)`, the same floats: each step in f32, the sine in f64
/// rounded once.
fn pixels() -> Vec<f32> {
    let mut out = Vec::with_capacity(2 * 3 * 64 * 64);
    for phase in [0.0f32, 1.0] {
        for c in 0..3 {
            for y in 0..64 {
                for x in 0..64 {
                    let a = x as f32 * (0.05 * (c + 1) as f64) as f32;
                    let a = a + y as f32 * 0.03f32;
                    let a = a + (0.5 * c as f64) as f32;
                    let a = a + phase;
                    out.push((a as f64).sin() as f32);
                }
            }
        }
    }
    out
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let norm = |v: &[f32]| v.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

/// The worst cosine and largest |Δ| of `got`'s rows (of `d`) against `want`'s.
fn compare(got: &[f32], want: &[Vec<f32>], d: usize) -> (f64, f32) {
    assert_eq!(got.len(), want.len() * d);
    let mut worst = (1.0f64, 0.0f32);
    for (row, want) in got.chunks_exact(d).zip(want) {
        worst.0 = worst.0.min(cosine(row, want));
        let delta = row.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        worst.1 = worst.1.max(delta);
    }
    worst
}

fn model(name: &str, precision: Precision) -> ImageText {
    ImageText::prepare(&weights(name), precision).unwrap()
}

#[test]
fn the_same_pixels_embed_as_transformers_embeds_them() {
    let (reference, executor, pixels) = (reference(), executor(), pixels());
    for (name, family, dims, text) in
        [("clip", "clip", 24, true), ("clip-vision", "clip", 24, false), ("siglip", "siglip", 32, true)]
    {
        let model = model(name, Precision::F32);
        assert_eq!((model.family(), model.dimensions(), model.image_size()), (family, dims, 64), "{name}");
        assert_eq!((model.has_vision(), model.has_text()), (true, text), "{name}");
        let mut out = vec![f32::NAN; 2 * dims];
        model.encode_pixels(&executor, &pixels, 2, &mut out).unwrap();
        let (cos, delta) = compare(&out, &rows(&reference[name]["pixels_embeds"]), dims);
        eprintln!("{name} pixels: cosine {cos:.7}, max |Δ| {delta:.2e}");
        assert!(cos >= 0.9999 && delta <= 1e-4, "{name}: cosine {cos}, max |Δ| {delta}");
        // One at a time gives the same rows as the batch.
        let mut single = vec![f32::NAN; dims];
        model.encode_pixels(&executor, &pixels[3 * 64 * 64..], 1, &mut single).unwrap();
        assert_eq!(&single[..], &out[dims..], "{name}: batch of one");
    }
}

#[test]
fn texts_embed_as_transformers_embeds_them() {
    let (reference, executor) = (reference(), executor());
    for (name, dims) in [("clip", 24), ("siglip", 32)] {
        let model = model(name, Precision::F32);
        let texts: Vec<String> =
            reference[name]["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();
        let ids = model.token_ids(&executor, &texts).unwrap();
        let want_ids: Vec<Vec<u32>> = reference[name]["token_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect())
            .collect();
        assert_eq!(ids, want_ids, "{name}: token ids");
        let mut out = vec![f32::NAN; texts.len() * dims];
        model.encode_texts(&executor, &texts, &mut out).unwrap();
        let (cos, delta) = compare(&out, &rows(&reference[name]["text_embeds"]), dims);
        eprintln!("{name} texts: cosine {cos:.7}, max |Δ| {delta:.2e}");
        assert!(cos >= 0.9999 && delta <= 1e-4, "{name}: cosine {cos}, max |Δ| {delta}");
        let scale = reference[name]["logit_scale"].as_f64().unwrap() as f32;
        assert_eq!(model.logit_scale(), Some(scale), "{name}");
        assert_eq!(model.logit_bias(), reference[name]["logit_bias"].as_f64().map(|b| b as f32), "{name}");
    }
    let vision_only = model("clip-vision", Precision::F32);
    let e = vision_only.encode_texts(&executor, &["a".to_string()], &mut [0.0; 24]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
}

#[test]
fn bf16_embeds_within_a_thousandth_of_transformers() {
    if Kernels::for_class(None).unwrap().bf16.is_none() {
        eprintln!("skipped: this CPU has no AVX512_BF16");
        return;
    }
    let (reference, executor, pixels) = (reference(), executor(), pixels());
    for (name, dims) in [("clip", 24), ("clip-vision", 24), ("siglip", 32)] {
        let model = model(name, Precision::Bf16);
        let mut out = vec![f32::NAN; 2 * dims];
        model.encode_pixels(&executor, &pixels, 2, &mut out).unwrap();
        let (cos, delta) = compare(&out, &rows(&reference[name]["pixels_embeds"]), dims);
        eprintln!("{name} bf16 pixels: cosine {cos:.7}, max |Δ| {delta:.2e}");
        assert!(cos >= 0.999, "{name} bf16: cosine {cos}");
        if model.has_text() {
            let texts: Vec<String> =
                reference[name]["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();
            let mut out = vec![f32::NAN; texts.len() * dims];
            model.encode_texts(&executor, &texts, &mut out).unwrap();
            let (cos, delta) = compare(&out, &rows(&reference[name]["text_embeds"]), dims);
            eprintln!("{name} bf16 texts: cosine {cos:.7}, max |Δ| {delta:.2e}");
            assert!(cos >= 0.999, "{name} bf16 texts: cosine {cos}");
        }
    }
}

#[test]
fn a_small_scratch_limit_batches_without_changing_the_rows() {
    let reference = reference();
    let small = Executor::for_ram(crate::ExecutorForRamConfig {
        threads: Some(2),
        scratch_limit: Some(1),
        ..Default::default()
    })
    .unwrap();
    let model = model("siglip", Precision::F32);
    assert!(model.scratch_per_image() > 64 * 64 * 3 * 4, "{}", model.scratch_per_image());
    let mut out = vec![f32::NAN; 2 * 32];
    model.encode_pixels(&small, &pixels(), 2, &mut out).unwrap();
    let (cos, delta) = compare(&out, &rows(&reference["siglip"]["pixels_embeds"]), 32);
    assert!(cos >= 0.9999 && delta <= 1e-4, "cosine {cos}, max |Δ| {delta}");
    // The verb sizes the pixels: a wrong size is a bug, not the caller's input.
    let e = model.encode_pixels(&small, &pixels()[1..], 2, &mut out).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Internal, "{e}");
}

#[test]
fn a_config_of_another_architecture_is_unsupported() {
    for json in [r#"{"model_type": "bert"}"#, r#"{"architectures": ["CLIPModel"]}"#, r#"{"model_type": "blip"}"#] {
        let e = super::params::Config::from_json(&serde_json::from_str(json).unwrap()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{json}: {e}");
        assert!(e.to_string().contains("model_type"), "{e}");
    }
    // The text fixtures' folder holds a BERT: prepared as CLIP, refused naming what it found.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/families/distilbert");
    let weights = RamWeights::new(crate::model::source::open(path, None, &mut |_| {}).unwrap()).unwrap();
    let e = ImageText::prepare(&weights, Precision::F32).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(e.to_string().contains("distilbert"), "{e}");
}

#[test]
fn clip_pools_at_the_first_end_of_text_and_siglip_at_the_last_position() {
    assert_eq!(pooled_position(Variant::Clip, &[0, 5, 7, 1, 1, 1], 1), 3);
    assert_eq!(pooled_position(Variant::Clip, &[0, 5, 9, 3], 2), 2); // the legacy id: the largest id
    assert_eq!(pooled_position(Variant::Siglip, &[4, 5, 1, 0, 0], 1), 4);
}
