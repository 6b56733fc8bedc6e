//! Executors. (Contract stub: replaced by the executor work.)

use crate::error::{Error, Result};
use crate::handle::Lifecycle;
use crate::types::*;
use std::sync::Arc;

/// The threads or streams a verb runs on, shared across models. Cloning shares the same executor.
#[derive(Clone, Debug)]
pub struct Executor {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    lifecycle: Arc<Lifecycle>,
}

impl Executor {
    pub fn for_ram(config: ExecutorForRamConfig) -> Result<Executor> {
        let _ = config;
        Ok(Executor { inner: Arc::new(Inner { lifecycle: Arc::new(Lifecycle::new()) }) })
    }
    pub fn for_vram(config: ExecutorForVramConfig) -> Result<Executor> {
        let _ = config;
        Err(Error::unavailable("`forVram` found no GPU: `gpuDevices()` lists none"))
    }
    pub fn on_pool(pool: u64, config: ExecutorOnPoolConfig) -> Result<Executor> {
        let _ = (pool, config);
        Err(Error::unsupported("borrowing a ForkUnion pool is not designed yet"))
    }
    pub fn drain(&self, mood: Mood) -> Result<()> {
        let _ = mood;
        self.inner.lifecycle.check("Executor", "drain")
    }
    pub fn free(&self) -> Result<()> {
        self.inner.lifecycle.begin_free("Executor", "meshes").map(|_| ())
    }
    /// The GPUs this executor drives, in its device order; empty for a RAM executor.
    pub fn devices(&self) -> Result<Vec<GpuDevice>> {
        self.inner.lifecycle.check("Executor", "devices")?;
        Ok(Vec::new())
    }
    /// The life cycle a mesh borrows so the executor cannot be freed under it.
    pub fn lifecycle(&self) -> &Arc<Lifecycle> {
        &self.inner.lifecycle
    }
}
