//! `Model.encode_image` and the image-text models' `encode_text` end to end (issue 32, scenarios 36–38): the
//! random-weight CLIP, CLIP vision-only and SigLIP checkpoints of `tests/fixtures/images` (made by
//! `make_images.py` with transformers), loaded as a user loads them, against transformers' embeddings of the
//! committed files, of the processor's own crops (the same pixels), and its image × text logits.

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use support::cosine::worst_cosine_at;
use uform_core::{
    EncodeImageOptions, EncodeTextOptions, ErrorKind, Executor, ExecutorForRamConfig, F32Matrix, Model,
    ModelLoadRamConfig, Precision,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/images")
}

fn reference() -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join("reference.json")).unwrap()).unwrap()
}

fn executor(threads: u32, scratch_limit: Option<u64>) -> Executor {
    Executor::for_ram(ExecutorForRamConfig { threads: Some(threads), scratch_limit, ..Default::default() }).unwrap()
}

fn load(name: &str, executor: &Executor, precision: Option<Precision>) -> Model {
    let config =
        ModelLoadRamConfig { executor: Some(executor.clone()), memory_domains: None, precision, revision: None };
    Model::load_ram(root().join(name).to_str().unwrap(), config).unwrap()
}

fn matrix(v: &Value) -> Vec<Vec<f32>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect())
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

fn read(folder: &str, names: &[String]) -> Vec<Vec<u8>> {
    names.iter().map(|n| std::fs::read(root().join(folder).join(n)).unwrap()).collect()
}

fn rows(m: &F32Matrix) -> Vec<&[f32]> {
    m.data.chunks_exact(m.columns as usize).collect()
}

fn encode(model: &Model, images: &[Vec<u8>], options: EncodeImageOptions) -> uform_core::Result<F32Matrix> {
    let borrowed: Vec<&[u8]> = images.iter().map(Vec::as_slice).collect();
    model.encode_image(&borrowed, options)
}

#[test]
fn every_checkpoint_embeds_the_committed_files_and_the_processors_crops_as_transformers() {
    let json = reference();
    let ex = executor(2, None);
    for name in ["clip", "clip-vision", "siglip"] {
        let entry = &json[name];
        let model = load(name, &ex, None);
        let files = read("files", &strings(&entry["files"]));
        let got = encode(&model, &files, EncodeImageOptions { normalize: Some(false) }).unwrap();
        let (cosine, at) = worst_cosine_at(&got, &matrix(&entry["image_embeds"]));
        eprintln!("{name}: worst cosine from the files {cosine:.7} (files[{at}])");
        assert!(cosine >= 0.999, "{name}: files[{at}] at cosine {cosine}");
        // The processor's own crops are the same pixels: nothing left to the decoder but PNG.
        let crops = read(&format!("crops/{}", name.split('-').next().unwrap()), &strings(&entry["crops"]));
        let got = encode(&model, &crops, EncodeImageOptions::default()).unwrap();
        let (cosine, at) = worst_cosine_at(&got, &matrix(&entry["crop_embeds"]));
        eprintln!("{name}: worst cosine from the same pixels {cosine:.7} (crops[{at}])");
        assert!(cosine >= 0.9999, "{name}: crops[{at}] at cosine {cosine}");
        // Normalised by default, one row per image in input order.
        for row in rows(&got) {
            let norm = row.iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-5, "{name}: a row of norm {norm}");
        }
        let described = model.describe().unwrap();
        let towers: &[&str] = if name == "clip-vision" { &["image"] } else { &["text", "image"] };
        assert_eq!(described.towers, towers, "{name}");
        assert_eq!(described.family.as_deref(), Some(name.split('-').next().unwrap()));
        assert_eq!(described.dimensions as usize, got.columns as usize);
        model.free().unwrap();
    }
}

#[test]
fn image_text_similarity_matches_transformers_logits_per_image() {
    let json = reference();
    let ex = executor(2, None);
    for name in ["clip", "siglip"] {
        let entry = &json[name];
        let model = load(name, &ex, None);
        let images = encode(&model, &read("files", &strings(&entry["files"])), EncodeImageOptions::default()).unwrap();
        let texts = model.encode_text(&strings(&entry["texts"]), EncodeTextOptions::default()).unwrap();
        let (cosine, at) = worst_cosine_at(&texts, &matrix(&entry["text_embeds"]));
        assert!(cosine >= 0.9999, "{name}: texts[{at}] at cosine {cosine}");
        let scale = (entry["logit_scale"].as_f64().unwrap()).exp();
        let bias = entry["logit_bias"].as_f64().unwrap_or(0.0);
        let want = matrix(&entry["logits_per_image"]);
        let mut worst = 0f64;
        for (i, image) in rows(&images).into_iter().enumerate() {
            for (t, text) in rows(&texts).into_iter().enumerate() {
                let dot: f64 = image.iter().zip(text).map(|(a, b)| *a as f64 * *b as f64).sum();
                worst = worst.max((scale * dot + bias - want[i][t] as f64).abs());
            }
        }
        // Logits scaled by exp(logit_scale) (14.3 for CLIP's init, 10 for SigLIP's): JPEG's decoding differences
        // move a cosine by under 1e-3.
        eprintln!("{name}: logits_per_image within {worst:.5} (scale {scale:.2})");
        assert!(worst < 0.02 * scale, "{name}: logits differ by {worst}");
        model.free().unwrap();
    }
}

#[test]
fn batches_under_a_small_scratch_limit_and_bf16_give_the_same_rows() {
    let json = reference();
    let entry = &json["clip"];
    let files = read("files", &strings(&entry["files"]));
    let whole = encode(&load("clip", &executor(2, None), None), &files, EncodeImageOptions::default()).unwrap();
    // A limit below one image's scratch still runs, an image at a time.
    let tight = encode(&load("clip", &executor(1, Some(1)), None), &files, EncodeImageOptions::default()).unwrap();
    assert_eq!(whole.data, tight.data);
    let single = encode(&load("clip", &executor(2, None), None), &files[3..4], EncodeImageOptions::default()).unwrap();
    assert_eq!(single.data, rows(&whole)[3]);
    let empty = encode(&load("clip", &executor(2, None), None), &[], EncodeImageOptions::default()).unwrap();
    assert_eq!((empty.rows, empty.data.len()), (0, 0));
    let bf16 = uform_core::capabilities::runnable_cpu_classes().contains(&"intel-sapphirerapids")
        || uform_core::capabilities::runnable_cpu_classes().contains(&"amd-genoa");
    if bf16 {
        let model = load("clip", &executor(2, None), Some(Precision::Bf16));
        let got = encode(&model, &files, EncodeImageOptions::default()).unwrap();
        let (cosine, at) = worst_cosine_at(&got, &matrix(&entry["image_embeds"]));
        eprintln!("clip bf16: worst cosine from the files {cosine:.7}");
        assert!(cosine >= 0.999, "bf16: files[{at}] at cosine {cosine}");
        assert_ne!(got.data, whole.data);
    }
}

#[test]
fn hostile_images_are_invalid_arguments_naming_their_index_and_the_model_stays_usable() {
    let ex = executor(2, None);
    let model = load("clip", &ex, None);
    let good = std::fs::read(root().join("files/photo.jpg")).unwrap();
    let hostile = root().join("hostile");
    let mut names: Vec<String> =
        std::fs::read_dir(&hostile).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert!(names.len() >= 4, "{names:?}");
    for name in names.iter().map(String::as_str).chain(["<empty>"]) {
        let bytes = if name == "<empty>" { Vec::new() } else { std::fs::read(hostile.join(name)).unwrap() };
        let images = [good.clone(), good.clone(), bytes];
        let err = encode(&model, &images, EncodeImageOptions::default()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{name}: {err}");
        assert!(err.to_string().contains("images[2]"), "{name}: {err}");
        if name.contains("bomb") {
            assert!(err.to_string().contains("budget"), "{name}: {err}");
        }
    }
    // Nothing was lost: the model still embeds.
    assert_eq!(encode(&model, &[good], EncodeImageOptions::default()).unwrap().rows, 1);
}

#[test]
fn text_only_and_vision_only_models_refuse_the_other_verb_and_image_text_models_refuse_rerank() {
    let ex = executor(2, None);
    let text = Model::load_ram(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/families/distilbert").to_str().unwrap(),
        ModelLoadRamConfig { executor: Some(ex.clone()), memory_domains: None, precision: None, revision: None },
    )
    .unwrap();
    assert_eq!(text.describe().unwrap().towers, ["text"]);
    let photo = std::fs::read(root().join("files/photo.jpg")).unwrap();
    let err = encode(&text, &[photo], EncodeImageOptions::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
    let vision = load("clip-vision", &ex, None);
    let err = vision.encode_text(&["a dog".to_string()], EncodeTextOptions::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
    let clip = load("clip", &ex, None);
    let err = clip.rerank("a dog", &["a cat".to_string()], Default::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
    let options = EncodeTextOptions { prompt: Some("query: ".into()), ..Default::default() };
    let err = clip.encode_text(&["a dog".to_string()], options).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
    let options = EncodeTextOptions { dimensions: Some(8), ..Default::default() };
    let cut = clip.encode_text(&["a dog".to_string()], options).unwrap();
    assert_eq!(cut.columns, 8);
}
