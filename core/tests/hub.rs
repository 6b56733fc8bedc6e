//! A model loaded by its Hub name from a Hugging Face cache laid out as `huggingface_hub` lays it out (`refs/`,
//! `snapshots/<commit>/` whose files link into `blobs/`), equal to the same model loaded from its folder. One test
//! in its own binary: it sets the cache's environment variables, which no other test of this process reads. The last
//! load names no executor, so it also runs on the default executor.

mod support;

use std::path::{Path, PathBuf};
use support::file_weights::test_model_dir;
use uform_core::{EncodeTextOptions, ErrorKind, Executor, ExecutorForRamConfig, Model, ModelLoadRamConfig};

const COMMIT: &str = "7dbbc90392e2f80f3d3c277d6e90027e55de9125";

/// Links every file of `from` into `snapshot` as the Hub cache does: each file's bytes in `blobs/<digest>`, and a
/// relative symbolic link to it in the snapshot.
fn link_tree(from: &Path, snapshot: &Path, blobs: &Path, depth: usize) {
    std::fs::create_dir_all(snapshot).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = snapshot.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            link_tree(&entry.path(), &target, blobs, depth + 1);
            continue;
        }
        let bytes = std::fs::read(entry.path()).unwrap();
        let digest = format!("{:016x}{:08x}", fnv(&bytes), bytes.len());
        std::fs::write(blobs.join(&digest), &bytes).unwrap();
        let up = "../".repeat(depth + 2);
        std::os::unix::fs::symlink(format!("{up}blobs/{digest}"), &target).unwrap();
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3))
}

/// A cache folder holding the test model as `sentence-transformers/all-MiniLM-L6-v2` at COMMIT, on `main` and tag `v1`.
fn cache() -> PathBuf {
    let cache = std::env::temp_dir().join(format!("uform-hub-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let repository = cache.join("models--sentence-transformers--all-MiniLM-L6-v2");
    std::fs::create_dir_all(repository.join("blobs")).unwrap();
    std::fs::create_dir_all(repository.join("refs")).unwrap();
    std::fs::write(repository.join("refs/main"), COMMIT).unwrap();
    std::fs::write(repository.join("refs/v1"), COMMIT).unwrap();
    link_tree(&test_model_dir(), &repository.join("snapshots").join(COMMIT), &repository.join("blobs"), 0);
    cache
}

#[test]
fn a_hub_name_loads_the_cached_snapshot_like_its_folder() {
    let cache = cache();
    let executor = Executor::for_ram(ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap();
    let load = |source: &str, revision: Option<&str>| {
        let config = ModelLoadRamConfig {
            executor: Some(executor.clone()),
            memory_domains: None,
            precision: None,
            revision: revision.map(str::to_string),
        };
        Model::load_ram(source, config)
    };
    let texts = ["A man is eating food.".to_string(), "Ein Mann isst.".to_string()];
    let folder = test_model_dir();
    let want = load(folder.to_str().unwrap(), None).unwrap().encode_text(&texts, EncodeTextOptions::default()).unwrap();
    let name = "sentence-transformers/all-MiniLM-L6-v2";

    // This binary's only test: no other thread reads the environment meanwhile.
    std::env::set_var("HF_HUB_CACHE", &cache);
    for revision in [None, Some("main"), Some("v1"), Some(COMMIT)] {
        let model = load(name, revision).unwrap();
        assert_eq!(model.describe().unwrap().path, name, "the path as given");
        let rows = model.encode_text(&texts, EncodeTextOptions::default()).unwrap();
        assert_eq!(rows.data, want.data, "{revision:?}: the same model as its folder");
        model.free().unwrap();
    }
    let e = load(name, Some("v2")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable);
    assert!(e.message().contains("holds no revision `v2`"), "{e}");
    let e = load("sentence-transformers/all-mpnet-base-v2", None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable);
    assert!(e.message().contains(&cache.display().to_string()), "names the cache folder: {e}");
    assert!(e.message().contains("huggingface-cli download sentence-transformers/all-mpnet-base-v2"), "{e}");
    let e = load(name, Some("../../../etc")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let e = load(folder.to_str().unwrap(), Some("main")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "a revision with a folder: {e}");

    // `$HF_HOME/hub` when `HF_HUB_CACHE` is not set.
    let home = cache.with_extension("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::rename(&cache, home.join("hub")).unwrap();
    std::env::remove_var("HF_HUB_CACHE");
    std::env::set_var("HF_HOME", &home);
    // Naming no executor: the default one.
    let model = Model::load_ram(name, ModelLoadRamConfig::default()).unwrap();
    let rows = model.encode_text(&texts, EncodeTextOptions::default()).unwrap();
    assert_eq!(rows.data, want.data);
    std::fs::remove_dir_all(&home).unwrap();
    executor.free().unwrap();
}
