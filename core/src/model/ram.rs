//! RAM residency: each shard is read once into memory the process owns (an anonymous mapping bound to NUMA nodes
//! through hwloc before it is filled, then read-only), and read through the [`Weights`] view; the file is never
//! mapped, so nothing a later change to it does reaches the model. Dropping the last [`RamWeights`] frees every
//! shard.

use super::source::Source;
use super::weights::{TensorView, Weights};
use crate::error::{Error, Result};
use crate::executor::placement;
use hwlocality::memory::binding::{MemoryBindingFlags, MemoryBindingPolicy};
use hwlocality::memory::nodeset::NodeSet;
use std::collections::HashMap;
use std::path::Path;

/// One tensor's place: shard index and the absolute byte range in that shard's mapping.
#[derive(Debug)]
struct Place {
    name: String,
    dtype: &'static str,
    shape: Vec<usize>,
    shard: usize,
    start: usize,
    end: usize,
}

/// Weights read into host memory. The encoder reads tensors through its [`Weights`] implementation.
#[derive(Debug)]
pub struct RamWeights {
    source: Source,
    places: Vec<Place>,
    by_name: HashMap<String, usize>,
}

impl RamWeights {
    pub fn new(source: Source) -> Result<RamWeights> {
        let mut places = Vec::new();
        let mut by_name = HashMap::new();
        for (shard_index, shard) in source.shards.iter().enumerate() {
            for t in &shard.tensors {
                let shape = t.shape.iter().map(|&d| usize::try_from(d)).collect::<Result<Vec<_>, _>>();
                let shape = shape.map_err(|_| {
                    Error::invalid_argument(
                        "path",
                        format!("{}: tensor `{}` has a dimension over usize", shard.path.display(), t.name),
                    )
                })?;
                by_name.insert(t.name.clone(), places.len());
                places.push(Place {
                    name: t.name.clone(),
                    dtype: t.dtype,
                    shape,
                    shard: shard_index,
                    start: shard.data_start + t.begin as usize,
                    end: shard.data_start + t.end as usize,
                });
            }
        }
        Ok(RamWeights { source, places, by_name })
    }

    /// Every shard's memory, for the tests that look for it in `/proc/self/maps`.
    pub fn mappings(&self) -> impl Iterator<Item = &[u8]> {
        self.source.shards.iter().map(|s| &s.map[..])
    }
}

/// Binds `region` (memory not yet touched, so its pages are allocated there) to `nodes`. On a machine with one NUMA
/// node there is nothing to bind and `Ok` comes back; otherwise the OS's refusal (containers often refuse) comes
/// back as the reason, and the pages go where the kernel's default policy puts them.
pub fn bind(region: &[u8], nodes: &[u32]) -> std::result::Result<(), String> {
    if placement::machine().nodes.len() <= 1 {
        return Ok(());
    }
    let topology = placement::hwloc().ok_or("hwloc could not load the topology")?;
    if !topology.feature_support().memory_binding().is_some_and(|m| m.set_area()) {
        return Err("this OS does not support binding a memory area to NUMA nodes".into());
    }
    let set: NodeSet = nodes.iter().map(|&n| hwlocality::bitmap::BitmapIndex::try_from(n as usize).unwrap()).collect();
    topology
        .bind_memory_area(region, &set, MemoryBindingPolicy::Bind, MemoryBindingFlags::empty())
        .map_err(|e| e.to_string())
}

impl Weights for RamWeights {
    fn tensor(&self, name: &str) -> Option<TensorView<'_>> {
        let p = &self.places[*self.by_name.get(name)?];
        Some(TensorView {
            name: &p.name,
            dtype: p.dtype,
            shape: &p.shape,
            data: &self.source.shards[p.shard].map[p.start..p.end],
        })
    }

    fn names(&self) -> Vec<&str> {
        self.places.iter().map(|p| p.name.as_str()).collect()
    }

    fn directory(&self) -> Option<&Path> {
        Some(&self.source.directory)
    }
}
