//! The trainer against sentence-transformers' own trainer (`tests/fixtures/train/reference.json`, made by
//! `scripts/make-train-fixture.py`): the same 20 steps on the test model all-MiniLM-L6-v2 (`UFORM_TEST_MODEL_DIR`),
//! each step's loss within 1e-4 relative, the held-out embeddings after training at cosine ≥ 0.9999; then the
//! saved folder, the borrows, and bad input (scenarios 26–29).

mod support;

use serde_json::Value;
use std::path::Path;
use support::file_weights::test_model_dir;
use support::train_fixture::{config, cosine};
use uform_core::{
    EncodeTextOptions, ErrorKind, Executor, ExecutorForRamConfig, Model, ModelLoadRamConfig, Trainer,
    TrainerContrastiveConfig,
};

fn fixture() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/train/reference.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn texts(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect()
}

fn rows(v: &Value) -> Vec<Vec<f32>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect())
        .collect()
}

fn load(executor: &Executor, path: &str) -> Model {
    Model::load_ram(
        path,
        ModelLoadRamConfig { executor: Some(executor.clone()), memory_domains: None, precision: None, revision: None },
    )
    .unwrap()
}

fn executor() -> Executor {
    Executor::for_ram(ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap()
}

#[test]
fn twenty_steps_reproduce_sentence_transformers_and_the_saved_folder_loads_back() {
    let f = fixture();
    let dir = test_model_dir();
    let executor = executor();
    let model = load(&executor, dir.to_str().unwrap());
    let held_out = texts(&f["held_out"]);
    let before = model.encode_text(&held_out, EncodeTextOptions::default()).unwrap();
    let trainer = Trainer::contrastive(&model, config(&f)).unwrap();
    let pairs: Vec<(String, String)> = f["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_str().unwrap().to_string()))
        .collect();
    let mut worst = 0.0f64;
    for (k, indices) in f["steps"].as_array().unwrap().iter().enumerate() {
        let (anchors, positives): (Vec<String>, Vec<String>) =
            indices.as_array().unwrap().iter().map(|i| pairs[i.as_u64().unwrap() as usize].clone()).unzip();
        let step = trainer.step(&anchors, &positives).unwrap();
        let want = f["loss"][k].as_f64().unwrap();
        let rel = (step.loss - want).abs() / want.abs();
        worst = worst.max(rel);
        eprintln!(
            "step {}: loss {:.7} want {want:.7} (rel {rel:.2e}) lr {:.3e} norm {:.4} want {:.4} ({:.2} s)",
            step.step,
            step.loss,
            step.learning_rate,
            step.gradient_norm,
            f["grad_norm"][k].as_f64().unwrap(),
            step.seconds
        );
        assert_eq!(step.step, k as u64 + 1);
        assert!(
            (step.learning_rate - f["lr"][k].as_f64().unwrap()).abs() <= 1e-12,
            "step {k}: lr {}",
            step.learning_rate
        );
        assert!(
            rel <= 1e-4,
            "step {}: loss {} vs sentence-transformers' {want} (relative {rel:.2e})",
            k + 1,
            step.loss
        );
        let norm = f["grad_norm"][k].as_f64().unwrap();
        assert!(
            (step.gradient_norm - norm).abs() <= 1e-3 * norm,
            "step {}: gradient norm {}",
            k + 1,
            step.gradient_norm
        );
    }
    eprintln!("worst relative loss difference {worst:.3e}");
    // The model embeds with the trained weights without a save.
    let after = model.encode_text(&held_out, EncodeTextOptions::default()).unwrap();
    let h = after.columns as usize;
    for (i, want) in rows(&f["held_out_embeddings_after"]).iter().enumerate() {
        let got = &after.data[i * h..(i + 1) * h];
        let c = cosine(got, want);
        assert!(c >= 0.9999, "held-out text {i}: cosine {c} to the fixture after training");
        let moved = got.iter().zip(&before.data[i * h..]).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(moved > 1e-3, "held-out text {i} did not move ({moved})");
    }
    // The saved folder loads back to the same embeddings.
    let out = std::env::temp_dir().join(format!("uform-train-save-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    trainer.save(out.to_str().unwrap()).unwrap();
    let reloaded = load(&executor, out.to_str().unwrap());
    let again = reloaded.encode_text(&held_out, EncodeTextOptions::default()).unwrap();
    let diff = again.data.iter().zip(&after.data).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(diff <= 1e-6, "the saved model embeds {diff} away from the trained one");
    // Saving onto an existing path is refused and changes nothing.
    let err = trainer.save(out.to_str().unwrap()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{}", err.message());
    reloaded.free().unwrap();
    std::fs::remove_dir_all(&out).unwrap();
    // Borrowing: the model cannot be freed under the trainer; it can after.
    let err = model.free().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InUse);
    assert!(err.message().contains("1 trainer borrows it"), "{}", err.message());
    trainer.free().unwrap();
    trainer.free().unwrap();
    assert_eq!(trainer.step(&["a".into()], &["b".into()]).unwrap_err().kind(), ErrorKind::FreedHandle);
    model.free().unwrap();
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let dir = test_model_dir();
    let executor = executor();
    let model = load(&executor, dir.to_str().unwrap());
    let bad = |config: TrainerContrastiveConfig, field: &str| {
        let err = Trainer::contrastive(&model, config).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{field}: {}", err.message());
        assert!(err.message().contains(field), "{field}: {}", err.message());
    };
    for v in [f64::NAN, -1e-5, f64::INFINITY] {
        bad(TrainerContrastiveConfig { learning_rate: Some(v), ..Default::default() }, "config.learning_rate");
        bad(TrainerContrastiveConfig { weight_decay: Some(v), ..Default::default() }, "config.weight_decay");
        bad(TrainerContrastiveConfig { max_grad_norm: Some(v), ..Default::default() }, "config.max_grad_norm");
    }
    for v in [0.0, -1.0, f64::NAN] {
        bad(TrainerContrastiveConfig { scale: Some(v), ..Default::default() }, "config.scale");
    }
    for v in [1.0, -0.1, f64::NAN] {
        bad(TrainerContrastiveConfig { dropout: Some(v), ..Default::default() }, "config.dropout");
    }
    for v in [0, 513] {
        bad(TrainerContrastiveConfig { max_tokens: Some(v), ..Default::default() }, "config.max_tokens");
    }
    let texts = ["hello there".to_string()];
    let before = model.encode_text(&texts, EncodeTextOptions::default()).unwrap();
    let trainer = Trainer::contrastive(&model, TrainerContrastiveConfig::default()).unwrap();
    let (a, b) = (vec!["one".to_string(), "two".to_string()], vec!["uno".to_string()]);
    let err = trainer.step(&a, &b).unwrap_err();
    assert_eq!(
        (err.kind(), err.message().starts_with("`positives`")),
        (ErrorKind::InvalidArgument, true),
        "{}",
        err.message()
    );
    let err = trainer.step(&[], &[]).unwrap_err();
    assert!(err.message().starts_with("`anchors`"), "{}", err.message());
    let err = trainer.step(&["ok".into()], &["a\0b".into()]).unwrap_err();
    assert!(err.message().starts_with("`positives[0]`"), "{}", err.message());
    let parent = std::env::temp_dir().join(format!("uform-train-missing-{}/child", std::process::id()));
    let err = trainer.save(parent.to_str().unwrap()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io, "{}", err.message());
    let file = std::env::temp_dir().join(format!("uform-train-file-{}", std::process::id()));
    std::fs::write(&file, b"x").unwrap();
    assert_eq!(trainer.save(file.to_str().unwrap()).unwrap_err().kind(), ErrorKind::InvalidArgument);
    std::fs::remove_file(&file).unwrap();
    // No step ran, so the weights are the model's own.
    assert_eq!(model.encode_text(&texts, EncodeTextOptions::default()).unwrap(), before);
    // With dropout on (the model's own 0.1), steps run and the loss is finite.
    let step = trainer
        .step(&["a cat sits".into(), "stocks fell".into()], &["a cat rests".into(), "markets dropped".into()])
        .unwrap();
    assert!(step.loss.is_finite() && step.loss > 0.0);
    assert_eq!(step.step, 1);
    trainer.free().unwrap();
    model.free().unwrap();
}
