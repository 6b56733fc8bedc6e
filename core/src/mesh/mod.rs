//! Meshes. (Contract stub: replaced by the mesh work.)

use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::handle::Lifecycle;
use crate::types::*;
use std::sync::Arc;

/// One process's place among the processes of a run. Cloning shares the same mesh.
#[derive(Clone, Debug)]
pub struct Mesh {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    lifecycle: Arc<Lifecycle>,
    description: MeshDescription,
}

impl Mesh {
    pub fn bootstrap(executor: &Executor, options: MeshOptions) -> Result<Mesh> {
        let gpus = executor.devices()?;
        if options.host_domain_count.unwrap_or(1) != 1 {
            return Err(Error::unsupported("meshes with peers are not built yet"));
        }
        let description = MeshDescription {
            host_domain_index: 0,
            host_domain_count: 1,
            gpus_per_multimem_domain: gpus.len() as u32,
            multimem_domain_count: 1,
            multimem_tier: MultimemTier::PeerRead,
            gpus,
        };
        Ok(Mesh { inner: Arc::new(Inner { lifecycle: Arc::new(Lifecycle::new()), description }) })
    }
    pub fn describe(&self) -> Result<MeshDescription> {
        self.inner.lifecycle.check("Mesh", "describe")?;
        Ok(self.inner.description.clone())
    }
    pub fn free(&self) -> Result<()> {
        self.inner.lifecycle.begin_free("Mesh", "trainers").map(|_| ())
    }
}

/// Builds mesh options from the environment of torchrun or SLURM; `None` when neither launched this process.
pub fn mesh_options_from_environment() -> Result<Option<MeshOptions>> {
    Ok(None)
}
