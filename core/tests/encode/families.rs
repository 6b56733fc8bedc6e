//! The other families' random-weight checkpoints against sentence-transformers (f32 and bf16), cross-encoders'
//! scores, and prompts and Matryoshka dimensions.

use super::*;

/// The random-weight checkpoints `tests/fixtures/families/make_families.py` made with transformers, and
/// sentence-transformers' embeddings of their texts.
fn family_reference(family: &str) -> (PathBuf, Vec<String>, Vec<Vec<f32>>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/families");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(root.join("reference.json")).unwrap()).unwrap();
    let entry = &json[family];
    let texts = entry["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect();
    let rows = entry["embeddings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect())
        .collect();
    (root.join(family), texts, rows)
}

#[test]
fn every_family_checkpoint_reproduces_sentence_transformers_in_f32_and_bf16_and_is_not_trained_yet() {
    let _serial = RSS.lock().unwrap_or_else(|p| p.into_inner());
    use uform_core::{Model, ModelLoadRamConfig, Precision, Trainer, TrainerContrastiveConfig};
    let bf16 = uform_core::capabilities::runnable_cpu_classes().contains(&"intel-sapphirerapids")
        || uform_core::capabilities::runnable_cpu_classes().contains(&"amd-genoa");
    let families =
        [("distilbert", "DistilBert"), ("xlm-roberta", "Roberta"), ("mpnet", "MpNet"), ("modernbert", "ModernBert")];
    for (family, debug) in families {
        let (dir, texts, want) = family_reference(family);
        let load = |precision: Option<Precision>| {
            let config = ModelLoadRamConfig {
                executor: Some(executor(2, None)),
                memory_domains: None,
                precision,
                revision: None,
            };
            Model::load_ram(dir.to_str().unwrap(), config).unwrap()
        };
        let model = load(None);
        let described = model.describe().unwrap();
        assert_eq!(described.architecture.as_deref(), Some(family));
        assert_eq!(described.family.as_deref(), Some(family));
        // sentence-transformers 6 keeps max_seq_length out of the folder: the tokenizer's model_max_length, 64.
        assert_eq!((described.max_tokens, described.dimensions, described.cross_encoder), (64, 64, false));
        // The prompts' names as config_sentence_transformers.json lists them.
        let st: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("config_sentence_transformers.json")).unwrap())
                .unwrap();
        let expected: Vec<String> = st["prompts"].as_object().unwrap().keys().cloned().collect();
        let mut found = described.prompts.clone();
        found.sort();
        assert_eq!(found, expected, "{family}");
        assert!(family != "distilbert" || found == ["passage", "query"], "{found:?}");
        let got = model.encode_text(&texts, EncodeTextOptions::default()).unwrap();
        assert_eq!(got.columns, 64, "{family}");
        for (i, (g, w)) in rows(&got).into_iter().zip(&want).enumerate() {
            let cosine: f64 = g.iter().zip(w).map(|(a, b)| *a as f64 * *b as f64).sum(); // both unit length
            let diff = g.iter().zip(w).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
            assert!(cosine >= 0.9999 && diff <= 1e-4, "{family} text {i}: cosine {cosine}, max abs difference {diff}");
        }
        let e = Trainer::contrastive(&model, TrainerContrastiveConfig::default()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
        assert!(e.message().contains(debug), "{e}");
        model.free().unwrap();
        // bf16 runs every family too, where the CPU has it (issue 33).
        if bf16 {
            let model = load(Some(Precision::Bf16));
            let got = model.encode_text(&texts, EncodeTextOptions::default()).unwrap();
            let worst = worst_cosine(&got, &want);
            assert!(worst >= 0.999, "bf16 {family} at worst cosine {worst}");
            model.free().unwrap();
        }
    }
}

#[test]
fn cross_encoders_rerank_as_sentence_transformers_and_bad_input_is_refused() {
    let _serial = RSS.lock().unwrap_or_else(|p| p.into_inner());
    use uform_core::{Model, ModelLoadRamConfig, RerankOptions};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/families");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(root.join("reference.json")).unwrap()).unwrap();
    for family in ["bert-reranker", "xlm-roberta-reranker", "modernbert-reranker"] {
        let entry = &json[family];
        let query = entry["query"].as_str().unwrap();
        let documents: Vec<String> =
            entry["documents"].as_array().unwrap().iter().map(|d| d.as_str().unwrap().to_string()).collect();
        let want: Vec<f64> = entry["scores"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let config = ModelLoadRamConfig {
            executor: Some(executor(2, None)),
            memory_domains: None,
            precision: None,
            revision: None,
        };
        let model = Model::load_ram(root.join(family).to_str().unwrap(), config).unwrap();
        assert!(model.describe().unwrap().cross_encoder, "{family}");
        let got = model.rerank(query, &documents, RerankOptions::default()).unwrap();
        assert_eq!(got.iter().map(|s| s.index).collect::<Vec<_>>(), (0..documents.len() as u32).collect::<Vec<_>>());
        for (s, w) in got.iter().zip(&want) {
            assert!((s.score - w).abs() <= 1e-4, "{family} document {}: {} vs {w}", s.index, s.score);
        }
        let sorted =
            model.rerank(query, &documents, RerankOptions { sorted: Some(true), ..Default::default() }).unwrap();
        assert!(sorted.windows(2).all(|p| p[0].score >= p[1].score), "{family}: {sorted:?}");
        for s in &sorted {
            assert_eq!(s.score, got[s.index as usize].score, "{family}: the sorted scores keep their indices");
        }
        // bf16 scores too, where the CPU has it (issue 33): within 0.01 of sentence-transformers' f32 scores.
        let classes = uform_core::capabilities::runnable_cpu_classes();
        if classes.contains(&"intel-sapphirerapids") || classes.contains(&"amd-genoa") {
            let config = ModelLoadRamConfig {
                executor: Some(executor(2, None)),
                memory_domains: None,
                precision: Some(uform_core::Precision::Bf16),
                revision: None,
            };
            let bf16 = Model::load_ram(root.join(family).to_str().unwrap(), config).unwrap();
            let scores = bf16.rerank(query, &documents, RerankOptions::default()).unwrap();
            for (s, w) in scores.iter().zip(&want) {
                assert!((s.score - w).abs() <= 1e-2, "bf16 {family} document {}: {} vs {w}", s.index, s.score);
            }
            bf16.free().unwrap();
        }
        let e = model.rerank("", &documents, RerankOptions::default()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        let e = model.rerank(query, &[], RerankOptions::default()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        let e =
            model.rerank(query, &documents, RerankOptions { max_tokens: Some(0), ..Default::default() }).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        model.free().unwrap();
    }
    // An embedding model has no classification head.
    let config =
        ModelLoadRamConfig { executor: Some(executor(1, None)), memory_domains: None, precision: None, revision: None };
    let model = Model::load_ram(root.join("distilbert").to_str().unwrap(), config).unwrap();
    let e = model.rerank("q", &["d".to_string()], RerankOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    model.free().unwrap();
}

#[test]
fn prompts_and_matryoshka_dimensions_match_sentence_transformers() {
    let _serial = RSS.lock().unwrap_or_else(|p| p.into_inner());
    use uform_core::{Model, ModelLoadRamConfig};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/families");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(root.join("reference.json")).unwrap()).unwrap();
    let rows_of = |key: &str| -> Vec<Vec<f32>> {
        json["distilbert"][key]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect())
            .collect()
    };
    let (dir, texts, _) = family_reference("distilbert");
    let config =
        ModelLoadRamConfig { executor: Some(executor(2, None)), memory_domains: None, precision: None, revision: None };
    let model = Model::load_ram(dir.to_str().unwrap(), config).unwrap();
    let close = |got: &F32Matrix, want: &[Vec<f32>], what: &str| {
        assert_eq!(got.columns as usize, want[0].len(), "{what}");
        for (i, (g, w)) in rows(got).into_iter().zip(want).enumerate() {
            let diff = g.iter().zip(w).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
            assert!(diff <= 1e-4, "{what} text {i}: max abs difference {diff}");
        }
    };
    let named = EncodeTextOptions { prompt_name: Some("query".into()), ..Default::default() };
    let prompted = model.encode_text(&texts, named).unwrap();
    close(&prompted, &rows_of("prompted_query"), "prompt_name query");
    let given = EncodeTextOptions { prompt: Some("query: ".into()), ..Default::default() };
    assert_eq!(model.encode_text(&texts, given).unwrap(), prompted, "the same prompt given as text");
    let cut = model.encode_text(&texts, EncodeTextOptions { dimensions: Some(24), ..Default::default() }).unwrap();
    close(&cut, &rows_of("truncated_24"), "dimensions 24");
    for bad in [
        EncodeTextOptions { prompt_name: Some("nope".into()), ..Default::default() },
        EncodeTextOptions { prompt: Some("a".into()), prompt_name: Some("query".into()), ..Default::default() },
        EncodeTextOptions { dimensions: Some(0), ..Default::default() },
        EncodeTextOptions { dimensions: Some(65), ..Default::default() },
    ] {
        let e = model.encode_text(&texts, bad.clone()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad:?}: {e}");
    }
    model.free().unwrap();
}
