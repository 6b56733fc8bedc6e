//! The model's folder around an encode: the weights file changed after loading, side files checked like the
//! weights, the older sentence-transformers layout, and a tokenizer that gives a text no tokens.

use super::*;

/// A copy of the test model's folder in a fresh temporary directory (the weights copied, so they can be changed).
fn model_copy(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("uform-encode-{}-{label}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_tree(&test_model_dir(), &dir);
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// After `loadRam`, the model file is truncated, rewritten in place or deleted before the first encode (which
/// prepares the encoder) and again between encodes: the embeddings stay those of the intact file, and nothing faults.
#[test]
fn the_model_file_truncated_rewritten_or_deleted_after_loading_changes_nothing() {
    use uform_core::{Model, ModelLoadRamConfig};
    let _serial = RSS.lock().unwrap_or_else(|p| p.into_inner());
    let f = fixture();
    let texts = &f.texts[..4];
    let want = encode(&executor(2, None), texts, EncodeTextOptions::default()).unwrap();
    let exec = executor(2, None);
    type Change = fn(&Path);
    let changes: [(&str, Change); 3] = [
        ("truncated", |file| std::fs::OpenOptions::new().write(true).open(file).unwrap().set_len(0).unwrap()),
        ("rewritten", |file| {
            let len = std::fs::metadata(file).unwrap().len() as usize;
            std::fs::write(file, vec![0x3fu8; len.max(1 << 20)]).unwrap()
        }),
        ("deleted", |file| std::fs::remove_file(file).unwrap()),
    ];
    for (how, change) in changes {
        let dir = model_copy(how);
        let file = dir.join("model.safetensors");
        let bytes = std::fs::metadata(&file).unwrap().len();
        let rss = || (status_kib("RssAnon:"), status_kib("RssFile:"));
        let start = rss();
        let config =
            ModelLoadRamConfig { executor: Some(exec.clone()), memory_domains: None, precision: None, revision: None };
        let model = Model::load_ram(dir.to_str().unwrap(), config).unwrap();
        let loaded = rss();
        change(&file);
        let got = model.encode_text(texts, EncodeTextOptions::default()).unwrap();
        let encoded = rss();
        let grown = |(a, f): (u64, u64)| (a.saturating_sub(start.0), f.saturating_sub(start.1));
        eprintln!(
            "{how}: a {bytes}-byte model: RSS (anonymous, file) +{:?} KiB at load, +{:?} KiB after the first encode",
            grown(loaded),
            grown(encoded)
        );
        assert_eq!(got, want, "{how} before the first encode");
        if file.exists() {
            change(&file);
        }
        assert_eq!(model.encode_text(texts, EncodeTextOptions::default()).unwrap(), want, "{how} between encodes");
        model.free().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A folder of symbolic links to the test model's files, at `to` (the weights are never copied).
fn link_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            link_tree(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::os::unix::fs::symlink(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// The test model's folder as links, with some files replaced (`Some(text)`) or removed (`None`).
fn linked(label: &str, changes: &[(&str, Option<&str>)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("uform-encode-{}-{label}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    link_tree(&test_model_dir(), &dir);
    for (file, text) in changes {
        let _ = std::fs::remove_file(dir.join(file));
        if let Some(text) = text {
            std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
            std::fs::write(dir.join(file), text).unwrap();
        }
    }
    dir
}

fn load(dir: &Path, exec: &Executor) -> uform_core::Model {
    let config = uform_core::ModelLoadRamConfig {
        executor: Some(exec.clone()),
        memory_domains: None,
        precision: None,
        revision: None,
    };
    uform_core::Model::load_ram(dir.to_str().unwrap(), config).unwrap()
}

fn prepare_error(dir: &Path) -> uform_core::Error {
    Encoder::prepare(&FileWeights::open(dir), uform_core::Precision::F32).unwrap_err()
}

#[test]
fn side_files_are_checked_like_the_weights() {
    let _serial = RSS.lock().unwrap_or_else(|p| p.into_inner());
    let config = std::fs::read_to_string(test_model_dir().join("config.json")).unwrap();
    // A FIFO for each side file: an invalid argument naming it, never a read that blocks.
    for file in ["config.json", "tokenizer.json", "modules.json", "1_Pooling/config.json", "sentence_bert_config.json"]
    {
        let dir = linked(&format!("fifo-{}", file.replace('/', "-")), &[(file, None)]);
        let c = std::ffi::CString::new(dir.join(file).to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {file}");
        let e = prepare_error(&dir);
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{file}: {e}");
        assert!(e.message().contains(file) && e.message().contains("a FIFO, not a regular file"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
    // Over the size cap: 16 MiB for a configuration file.
    let padded = format!("{}, \"pad\": \"{}\"}}", config.trim_end().trim_end_matches('}'), "x".repeat(16 << 20));
    let dir = linked("huge-config", &[("config.json", Some(&padded))]);
    let e = prepare_error(&dir);
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("config.json") && e.message().contains("16777216-byte limit"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
    // A module path outside the folder.
    for path in ["../1_Pooling", "/etc", "1_Pooling/../../x"] {
        let modules = format!(r#"[{{"type": "sentence_transformers.models.Pooling", "path": "{path}"}}]"#);
        let dir = linked("outside", &[("modules.json", Some(&modules))]);
        let e = prepare_error(&dir);
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{path}: {e}");
        assert!(e.message().contains("outside the model's folder") && e.message().contains(path), "{e}");
        let e = uform_core::Model::load_ram(
            dir.to_str().unwrap(),
            uform_core::ModelLoadRamConfig {
                executor: Some(executor(1, None)),
                memory_domains: None,
                precision: None,
                revision: None,
            },
        );
        assert!(e.is_ok(), "a Pooling path does not stop a load: {:?}", e.err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// An older sentence-transformers layout: the Transformer in `0_Transformer/` beside `1_Pooling` and `2_Normalize`,
/// loaded from the root or from `0_Transformer/` itself; both embed as the reference (mean pooling, normalised).
#[test]
fn the_transformer_modules_path_is_honoured_from_the_root_or_its_own_folder() {
    let _serial = RSS.lock().unwrap_or_else(|p| p.into_inner());
    let f = fixture();
    let root = std::env::temp_dir().join(format!("uform-encode-{}-0_Transformer", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let model = test_model_dir();
    let transformer = root.join("0_Transformer");
    std::fs::create_dir_all(&transformer).unwrap();
    for file in ["config.json", "tokenizer.json", "sentence_bert_config.json", "model.safetensors"] {
        std::os::unix::fs::symlink(model.join(file), transformer.join(file)).unwrap();
    }
    link_tree(&model.join("1_Pooling"), &root.join("1_Pooling"));
    std::fs::write(
        root.join("modules.json"),
        r#"[{"idx": 0, "name": "0", "path": "0_Transformer", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]"#,
    )
    .unwrap();
    let exec = executor(2, None);
    for dir in [&root, &transformer] {
        let model = load(dir, &exec);
        let got = model.encode_text(&f.texts, EncodeTextOptions::default()).unwrap();
        assert_close(&got, &f.embeddings, &format!("loaded from {}", dir.display()));
        model.free().unwrap();
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// A tokenizer that adds no special tokens gives an empty text no tokens: its row is zeros (nothing to pool), with
/// mean and CLS pooling alike, and the other texts' rows are what they are alone.
#[test]
fn a_text_without_tokens_embeds_as_zeros_and_leaves_the_others_alone() {
    let _serial = RSS.lock().unwrap_or_else(|p| p.into_inner());
    let mut tokenizer: Value =
        serde_json::from_str(&std::fs::read_to_string(test_model_dir().join("tokenizer.json")).unwrap()).unwrap();
    tokenizer["post_processor"] = Value::Null;
    let tokenizer = tokenizer.to_string();
    let cls = r#"{"word_embedding_dimension": 384, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#;
    let exec = executor(2, None);
    for (label, pooling) in [("mean", None), ("cls", Some(cls))] {
        let mut changes = vec![("tokenizer.json", Some(tokenizer.as_str()))];
        if let Some(pooling) = pooling {
            changes.push(("1_Pooling/config.json", Some(pooling)));
        }
        let dir = linked(&format!("no-tokens-{label}"), &changes);
        let model = load(&dir, &exec);
        let texts: Vec<String> = ["", "hello world", "", "a second text"].iter().map(|s| s.to_string()).collect();
        let got = model.encode_text(&texts, EncodeTextOptions::default()).unwrap();
        let rows = rows(&got);
        assert!(rows[0].iter().chain(rows[2]).all(|v| *v == 0.0), "{label}: an empty text's row is not zeros");
        for i in [1, 3] {
            let alone = model.encode_text(&texts[i..i + 1], EncodeTextOptions::default()).unwrap();
            assert_eq!(rows[i], &alone.data[..], "{label}: text {i}");
            let norm = rows[i].iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-5, "{label}: text {i} norm {norm}");
        }
        let none = model.encode_text(&texts[..1], EncodeTextOptions::default()).unwrap();
        assert_eq!((none.rows, none.data.iter().all(|v| *v == 0.0)), (1, true), "{label}: alone");
        model.free().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
