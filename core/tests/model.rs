//! `Model.loadRam` / `Model.loadVram` on fixtures this test writes: exact descriptions of a file, a sharded pair and
//! a directory; the bad-file table; the borrowing rules; 10,000 load/free cycles with flat memory; the file is read,
//! never mapped, so it may change or go after the load.
//! Tests that read process-wide numbers (RSS, `/proc/self/maps`) hold [`SERIAL`] so the others cannot disturb them.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use uform_core::*;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// A fresh directory, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(label: &str) -> Dir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("uform-model-{}-{label}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> String {
        let p = self.path(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_string()
    }
    fn str(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One fixture tensor: name, dtype, shape, bytes.
type T = (&'static str, &'static str, Vec<u64>, Vec<u8>);

/// A safetensors file of `tensors`, data laid out in the given order, the header padded to 8 bytes.
fn safetensors(tensors: &[T]) -> Vec<u8> {
    let mut entries = Vec::new();
    let mut offset = 0;
    for (name, dtype, shape, data) in tensors {
        entries.push(format!(
            r#""{name}":{{"dtype":"{dtype}","shape":{shape:?},"data_offsets":[{offset},{}]}}"#,
            offset + data.len()
        ));
        offset += data.len();
    }
    let mut header = format!(r#"{{"__metadata__":{{"format":"pt"}},{}}}"#, entries.join(","));
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    raw(&header, &tensors.iter().flat_map(|t| t.3.clone()).collect::<Vec<_>>())
}

/// A file of any header text and data.
fn raw(header: &str, data: &[u8]) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

/// Several dtypes and shapes, a zero-sized tensor among them; the data is deliberately not in name order.
fn fixture() -> Vec<T> {
    vec![
        ("encoder.weight", "F32", vec![2, 3], bytes(24, 1)),
        ("embeddings", "BF16", vec![4], bytes(8, 2)),
        ("position_ids", "I64", vec![1, 3], bytes(24, 3)),
        ("empty", "U8", vec![0], Vec::new()),
        ("norm.bias", "F16", vec![2, 2], bytes(8, 4)),
        ("mask", "BOOL", vec![3], bytes(3, 5)),
        ("scale", "F64", vec![], bytes(8, 6)),
    ]
}

fn ram() -> Executor {
    Executor::for_ram(ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap()
}

fn load(path: &str, executor: &Executor) -> Result<Model> {
    Model::load_ram(
        path,
        ModelLoadRamConfig { executor: Some(executor.clone()), memory_domains: None, precision: None, revision: None },
    )
}

fn expected(path: &str, tensors: &[T], architecture: Option<&str>, executor: &Executor) -> ModelDescription {
    let tensors: Vec<TensorDescription> = tensors
        .iter()
        .map(|(n, d, s, b)| TensorDescription {
            name: n.to_string(),
            dtype: d.to_string(),
            shape: s.clone(),
            bytes: b.len() as u64,
        })
        .collect();
    ModelDescription {
        path: path.to_string(),
        format: "safetensors".into(),
        architecture: architecture.map(str::to_string),
        residency: Residency::Ram,
        memory_domains: executor.memory_domains(),
        devices: vec![],
        bytes: tensors.iter().map(|t| t.bytes).sum(),
        precision: Precision::F32,
        // Folders of weights alone: nothing the encoder would run.
        family: None,
        max_tokens: 0,
        dimensions: 0,
        prompts: vec![],
        cross_encoder: false,
        towers: vec![],
        // Four bytes a value of every floating-point tensor.
        weight_bytes: tensors
            .iter()
            .filter(|t| ["F32", "F16", "BF16"].contains(&t.dtype.as_str()))
            .map(|t| 4 * t.shape.iter().product::<u64>())
            .sum(),
        tensors,
    }
}

fn check_weights(model: &Model, tensors: &[T], directory: &Path) {
    let w = model.weights().unwrap();
    assert_eq!(w.names(), tensors.iter().map(|t| t.0).collect::<Vec<_>>());
    for (name, dtype, shape, data) in tensors {
        let v = w.tensor(name).unwrap();
        assert_eq!((v.name, v.dtype, v.data), (*name, *dtype, &data[..]), "tensor {name}");
        assert_eq!(v.shape, shape.iter().map(|&d| d as usize).collect::<Vec<_>>());
    }
    assert!(w.tensor("missing").is_none());
    assert_eq!(w.directory(), Some(directory));
}

#[test]
fn a_file_and_its_directory_describe_exactly() {
    let dir = Dir::new("file");
    let tensors = fixture();
    let file = dir.write("model.safetensors", safetensors(&tensors));
    dir.write("config.json", r#"{"model_type": "bert", "hidden_size": 4}"#);
    dir.write("tokenizer.json", "{}");
    let executor = ram();
    assert!(!executor.memory_domains().is_empty());
    for path in [file.as_str(), dir.str()] {
        let model = load(path, &executor).unwrap();
        assert_eq!(model.describe().unwrap(), expected(path, &tensors, Some("bert"), &executor));
        check_weights(&model, &tensors, &dir.0);
        if executor.memory_domains().len() == 1 {
            assert_eq!(model.placement_fallback(), None, "one NUMA node needs no binding");
        }
        model.free().unwrap();
    }
    // Without config.json there is no architecture; the only .safetensors file of a directory is its weights.
    std::fs::remove_file(dir.path("config.json")).unwrap();
    std::fs::rename(dir.path("model.safetensors"), dir.path("weights.safetensors")).unwrap();
    let model = load(dir.str(), &executor).unwrap();
    assert_eq!(model.describe().unwrap(), expected(dir.str(), &tensors, None, &executor));
}

#[test]
fn a_sharded_pair_describes_shard_by_shard() {
    let dir = Dir::new("sharded");
    let all = fixture();
    let (first, second) = (all[..3].to_vec(), all[3..].to_vec());
    dir.write("model-00001-of-00002.safetensors", safetensors(&first));
    dir.write("model-00002-of-00002.safetensors", safetensors(&second));
    let weight_map: Vec<String> = all
        .iter()
        .enumerate()
        .map(|(i, t)| format!(r#""{}": "model-0000{}-of-00002.safetensors""#, t.0, if i < 3 { 1 } else { 2 }))
        .collect();
    let index = dir.write(
        "model.safetensors.index.json",
        format!(r#"{{"metadata": {{"total_size": 99}}, "weight_map": {{{}}}}}"#, weight_map.join(", ")),
    );
    dir.write("config.json", r#"{"model_type": "xlm-roberta"}"#);
    let executor = ram();
    for path in [index.as_str(), dir.str()] {
        let model = load(path, &executor).unwrap();
        assert_eq!(model.describe().unwrap(), expected(path, &all, Some("xlm-roberta"), &executor));
        check_weights(&model, &all, &dir.0);
    }
}

#[test]
fn memory_domains_are_checked_and_reported() {
    let dir = Dir::new("numa");
    let file = dir.write("m.safetensors", safetensors(&fixture()));
    let executor = ram();
    let node = executor.memory_domains()[0];
    let config = |domains: Option<Vec<u32>>| ModelLoadRamConfig {
        executor: Some(executor.clone()),
        memory_domains: domains,
        precision: None,
        revision: None,
    };
    let model = Model::load_ram(&file, config(Some(vec![node]))).unwrap();
    let d = model.describe().unwrap();
    assert!(d.memory_domains == [node] || model.placement_fallback().is_some(), "{d:?}");
    for (domains, fragment) in
        [(vec![], "must name at least one NUMA node"), (vec![9999], "NUMA node 9999"), (vec![node, node], "twice")]
    {
        let e = Model::load_ram(&file, config(Some(domains))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().starts_with("`config.memory_domains` ") && e.message().contains(fragment), "{e}");
    }
}

/// Each bad input: kind and message fragments (the file, the tensor where there is one).
#[test]
fn bad_files_are_clear_errors() {
    let dir = Dir::new("bad");
    let executor = ram();
    let ok_tensor = r#""a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}"#;
    let mut cases: Vec<(String, ErrorKind, Vec<String>)> = Vec::new();
    // Every bad file is the caller's error.
    let mut case = |name: &str, contents: Vec<u8>, fragments: &[&str]| {
        let path = dir.write(name, contents);
        let mut f: Vec<String> = fragments.iter().map(|s| s.to_string()).collect();
        f.push(path.clone());
        cases.push((path, InvalidArgument, f));
    };
    use ErrorKind::*;
    case("empty.safetensors", vec![], &["is empty"]);
    case("short.safetensors", vec![1, 2, 3], &["has 3 bytes, fewer than the 8-byte header length"]);
    let mut past = 4096u64.to_le_bytes().to_vec();
    past.extend_from_slice(b"{}");
    case("past2.safetensors", past, &["header length 4096 runs past the end of the file (10 bytes)"]);
    let mut huge = 200_000_000u64.to_le_bytes().to_vec();
    huge.extend_from_slice(b"{}");
    case("huge.safetensors", huge, &["header length 200000000 is over the 100000000-byte limit"]);
    case("json.safetensors", raw(r#"{"a": {"#, &[]), &["not a JSON object of tensors"]);
    case(
        "dtype.safetensors",
        raw(r#"{"w":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}"#, &[0; 4]),
        &["tensor `w`", "dtype `F33` is not a safetensors dtype"],
    );
    case(
        "shape.safetensors",
        raw(r#"{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#, &[0; 8]),
        &["tensor `w`", "shape [3] of F32 is 12 bytes, but data_offsets [0, 8] hold 8"],
    );
    case(
        "outside.safetensors",
        raw(&format!("{{{ok_tensor}}}"), &[0; 4]),
        &["tensor `a`", "data_offsets [0, 8] run past the end of the data (4 bytes)"],
    );
    case(
        "overlap.safetensors",
        raw(&format!(r#"{{{ok_tensor},"b":{{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}}}"#), &[0; 8]),
        &["tensor `b` (bytes 4..8) overlaps tensor `a` (bytes 0..8)"],
    );
    case(
        "hole.safetensors",
        raw(r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}"#, &[0; 8]),
        &["bytes 0..4 of the data belong to no tensor", "tensor `a`"],
    );
    case("twice.safetensors", raw(&format!("{{{ok_tensor},{ok_tensor}}}"), &[0; 8]), &["names `a` twice"]);
    case("notes.txt", b"hello".to_vec(), &["has 5 bytes, fewer than the 8-byte header length"]);
    // A sharded index naming a missing shard, a shard outside its directory, a tensor its shard lacks.
    let shard = safetensors(&[("a", "U8", vec![2], vec![1, 2])]);
    dir.write("s1.safetensors", &shard);
    case(
        "missing.index.json",
        br#"{"weight_map": {"a": "s1.safetensors", "b": "s9.safetensors"}}"#.to_vec(),
        &["names shard `s9.safetensors`, which does not exist"],
    );
    case(
        "escape.index.json",
        br#"{"weight_map": {"a": "../s1.safetensors"}}"#.to_vec(),
        &["puts tensor `a` in `../s1.safetensors`, which is not a file name in the index's directory"],
    );
    case(
        "lacks.index.json",
        br#"{"weight_map": {"a": "s1.safetensors", "z": "s1.safetensors"}}"#.to_vec(),
        &["places tensor `z` in `s1.safetensors`, which does not hold it"],
    );
    case("nomap.index.json", br#"{"metadata": {}}"#.to_vec(), &["has no `weight_map` object"]);
    for (path, kind, fragments) in &cases {
        let e = load(path, &executor).unwrap_err();
        assert_eq!(e.kind(), *kind, "{path}: {e}");
        for f in fragments {
            assert!(e.message().contains(f.as_str()), "{path}: {:?} lacks {f:?}", e.message());
        }
        assert!(e.message().starts_with("`path` "), "{e}");
    }

    // Paths that are not weights files at all.
    let empty = Dir::new("noweights");
    std::fs::write(empty.path("config.json"), "{}").unwrap();
    let two = Dir::new("two");
    std::fs::write(two.path("a.safetensors"), &shard).unwrap();
    std::fs::write(two.path("b.safetensors"), &shard).unwrap();
    let fifo = dir.path("pipe.safetensors");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `c` is a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let config_dir = Dir::new("badconfig");
    std::fs::write(config_dir.path("model.safetensors"), &shard).unwrap();
    std::fs::write(config_dir.path("config.json"), "{ not json").unwrap();
    let through_file = format!("{}/inside.safetensors", dir.path("s1.safetensors").display());
    let other: Vec<(String, ErrorKind, Vec<String>)> = vec![
        (empty.str().into(), InvalidArgument, vec!["is a directory without weights".into(), empty.str().into()]),
        (
            two.str().into(),
            InvalidArgument,
            vec!["holds 2 .safetensors files and no model.safetensors.index.json".into()],
        ),
        (fifo.to_str().unwrap().into(), InvalidArgument, vec!["is a FIFO, not a regular file".into()]),
        ("/dev/null".into(), InvalidArgument, vec!["/dev/null: is a character device, not a regular file".into()]),
        (config_dir.str().into(), InvalidArgument, vec!["config.json: is not valid JSON".into()]),
        ("/nonexistent/uform/model.safetensors".into(), Io, vec!["`/nonexistent/uform/model.safetensors`".into()]),
        (through_file.clone(), Io, vec![format!("reading `{through_file}` failed: Not a directory")]),
        (String::new(), InvalidArgument, vec!["`path` must name a .safetensors file".into()]),
    ];
    for (path, kind, fragments) in &other {
        let e = load(path, &executor).unwrap_err();
        assert_eq!(e.kind(), *kind, "{path}: {e}");
        for f in fragments {
            assert!(e.message().contains(f.as_str()), "{path}: {:?} lacks {f:?}", e.message());
        }
    }
    // The same checks guard VRAM loads, after the device checks.
    let e = Model::load_vram(
        "/dev/null",
        ModelLoadVramConfig { executor: executor.clone(), devices: None, revision: None },
    )
    .unwrap_err();
    assert!(matches!(e.kind(), Unavailable | InvalidArgument), "{e}");
}

#[test]
fn a_model_borrows_its_executor() {
    let dir = Dir::new("borrow");
    let file = dir.write("m.safetensors", safetensors(&fixture()));
    let executor = ram();
    let model = load(&file, &executor).unwrap();
    let e = executor.free().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InUse);
    assert_eq!(e.message(), "`free` cannot free this Executor yet: 1 mesh or model still borrows it; free it first");
    let second = load(&file, &executor).unwrap();
    assert!(executor.free().unwrap_err().message().contains("2 meshes or models still borrow it; free them first"));
    drop(second); // dropping the last clone frees
    let clone = model.clone();
    clone.free().unwrap();
    assert!(model.is_freed());
    model.free().unwrap(); // a second free does nothing
    for (e, method) in [
        (model.describe().unwrap_err(), "describe"),
        (model.weights().err().unwrap(), "weights"),
        (model.executor().unwrap_err(), "executor"),
    ] {
        assert_eq!(e.kind(), ErrorKind::FreedHandle);
        assert_eq!(e.message(), format!("`{method}` was called on a Model that was already freed"));
    }
    executor.free().unwrap();
    let e = load(&file, &executor).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::FreedHandle);
    assert_eq!(e.message(), "`Model.load_ram` was called on an Executor that was already freed");
    let e = Model::load_vram(&file, ModelLoadVramConfig { executor, devices: None, revision: None }).unwrap_err();
    assert_eq!(e.message(), "`Model.load_vram` was called on an Executor that was already freed");
}

/// The seed's opening example without a GPU: `Executor.forVram` and `Model.loadVram` are unavailable, with
/// messages a user understands. With a GPU this is `scripts/gpu-check.sh`'s job.
#[test]
fn vram_without_a_gpu_is_unavailable() {
    if !gpu_devices().is_empty() {
        eprintln!("a GPU is present: scripts/gpu-check.sh covers loadVram");
        return;
    }
    let e = Executor::for_vram(ExecutorForVramConfig { devices: Some(vec![0, 1]), ..Default::default() }).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable);
    let dir = Dir::new("vram");
    let file = dir.write("model.safetensors", safetensors(&fixture()));
    let executor = ram();
    let e = Model::load_vram(
        &file,
        ModelLoadVramConfig { executor: executor.clone(), devices: Some(vec![0, 1]), revision: None },
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable);
    assert!(e.message().starts_with("no GPU driver: `Model.load_vram` needs a VRAM executor"), "{e}");
    assert!(e.message().contains("`Model.load_ram`"), "{e}");
    executor.free().unwrap(); // the failed load left no borrow behind
}

fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    // SAFETY: `sysconf` reads a constant of the system.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64
}

fn maps_mention(path: &str) -> usize {
    std::fs::read_to_string("/proc/self/maps").unwrap().lines().filter(|l| l.contains(path)).count()
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn ten_thousand_loads_keep_memory_flat() {
    let _serial = serial();
    let dir = Dir::new("cycles");
    let file = dir.write("model.safetensors", safetensors(&fixture()));
    dir.write("config.json", r#"{"model_type": "bert"}"#);
    let executor = ram();
    let cycle = || {
        let model = load(dir.str(), &executor).unwrap();
        assert_eq!(model.describe().unwrap().tensors.len(), 7);
        model.free().unwrap();
    };
    for _ in 0..200 {
        cycle();
    }
    let (rss, fds) = (resident_bytes(), open_fds());
    for _ in 0..10_000 {
        cycle();
    }
    let grown = resident_bytes() as i64 - rss as i64;
    eprintln!("10000 load/free cycles: resident memory {rss} -> {} bytes ({grown:+})", resident_bytes());
    assert!(grown < 1 << 20, "resident memory grew by {grown} bytes over 10,000 cycles");
    assert_eq!(open_fds(), fds, "file descriptors leaked");
    assert_eq!(maps_mention(&file), 0, "a mapping outlived its model");
    executor.free().unwrap();
}

#[test]
fn the_file_is_read_not_mapped_and_may_change_or_go() {
    let _serial = serial();
    let dir = Dir::new("unmap");
    let file = dir.write("model.safetensors", safetensors(&fixture()));
    let executor = ram();
    let model = load(&file, &executor).unwrap();
    assert_eq!(maps_mention(&file), 0, "the file is read into memory, never mapped");
    let view = model.weights().unwrap();
    let scale = || view.tensor("scale").unwrap().data.to_vec();
    // Truncated, rewritten in place, then deleted: the model keeps what the file held at load.
    std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(0).unwrap();
    assert_eq!(scale(), bytes(8, 6), "after truncation");
    std::fs::write(&file, vec![0xa5u8; 4096]).unwrap();
    assert_eq!(scale(), bytes(8, 6), "after a rewrite");
    std::fs::remove_file(&file).unwrap();
    assert_eq!(scale(), bytes(8, 6), "after deletion");
    model.free().unwrap();
    assert_eq!(scale(), bytes(8, 6), "a view taken before free keeps the weights until it is dropped");
    drop(view);
    executor.free().unwrap();
}

/// Bindings share models across threads, and the encoder reads weights from executor threads.
#[test]
fn models_and_their_weights_cross_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Model>();
    shareable::<std::sync::Arc<dyn uform_core::model::Weights>>();
    let dir = Dir::new("threads");
    let file = dir.write("m.safetensors", safetensors(&fixture()));
    let executor = Executor::for_ram(ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap();
    let model = load(&file, &executor).unwrap();
    let weights = model.weights().unwrap();
    let names = weights.names();
    let seen = std::sync::atomic::AtomicUsize::new(0);
    executor
        .for_n(names.len(), |i| {
            let t = weights.tensor(names[i]).unwrap();
            seen.fetch_add(t.data.len(), Ordering::Relaxed);
        })
        .unwrap();
    assert_eq!(seen.into_inner() as u64, model.describe().unwrap().bytes);
}
