//! Collectives: what the processes of a mesh compute together. A trainer across processes sums its gradients with
//! [`Collective::all_reduce_sum`] and checks that every process steps alike with [`Collective::all_gather`]; it
//! never knows which engine runs them. [`Mesh::collective`](crate::mesh::Mesh::collective) makes one: [`Solo`] for a
//! mesh of one process, [`gloo::Group`] (TCP, ring all-reduce) otherwise. An NCCL engine for VRAM executors can
//! come later behind the same trait without touching the trainer.
//!
//! Every process of a group must call the same collectives in the same order, as with torch.distributed. A
//! collective that fails (a peer gone, a timeout) leaves the group broken: every later call fails at once with the
//! same error, and a new group is needed.

pub mod gloo;

use crate::error::Result;

/// Collective operations across the processes of one group.
pub trait Collective: Send + Sync + std::fmt::Debug {
    /// This process's rank, from 0.
    fn rank(&self) -> usize;
    /// Processes in the group.
    fn size(&self) -> usize;
    /// Sums `data` element by element across every process, in place: afterwards every process holds the same sums.
    fn all_reduce_sum(&self, data: &mut [f32]) -> Result<()>;
    /// Every process's `values` (each process passing as many), concatenated in rank order.
    fn all_gather(&self, values: &[u64]) -> Result<Vec<u64>>;
}

/// The group of one process: every collective is the identity.
#[derive(Debug, Default)]
pub struct Solo;

impl Collective for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn all_reduce_sum(&self, _data: &mut [f32]) -> Result<()> {
        Ok(())
    }
    fn all_gather(&self, values: &[u64]) -> Result<Vec<u64>> {
        Ok(values.to_vec())
    }
}
