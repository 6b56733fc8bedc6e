//! Collectives: what the processes of a mesh compute together. A trainer across processes sums its gradients with
//! [`Collective::all_reduce_sum`], a [`Bucket`] at a time as its backward pass finishes each, and checks that every
//! process steps alike with [`Collective::all_gather`]; it never knows which engine runs them.
//! [`Mesh::collective`](crate::mesh::Mesh::collective) makes one: [`Solo`] for a mesh of one process, else
//! [`connect`], which chooses the engine: [`gloo::Group`] (TCP, ring all-reduce) so far. An NCCL engine for VRAM
//! executors is one more module here and one more choice in [`connect`], without touching the mesh or the trainer.
//!
//! Every process of a group must call the same collectives in the same order, as with torch.distributed. A
//! collective that fails (a peer gone, a timeout) leaves the group broken: every later call fails at once with the
//! same error, and a new group is needed.

pub mod gloo;

use crate::error::Result;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use gloo::GoneRanks;

/// Where the processes of a new group meet and who this one is among them: what the mesh gives [`connect`].
pub struct Meeting<'a> {
    /// The directory the group's processes exchange their addresses through, made for this group alone.
    pub store: &'a Path,
    /// The address this process listens on.
    pub address: &'a str,
    pub rank: usize,
    pub size: usize,
    /// The bound of every wait, the connection's included.
    pub timeout: Duration,
    /// Which ranks are known to be gone, for a failure's message.
    pub gone: GoneRanks,
}

/// Whether the engine [`connect`] would choose runs in this process; the reason as an unavailable error when not.
pub fn available() -> Result<()> {
    gloo::available()
}

/// Connects this process to the group `meeting` describes with the engine that runs its collectives (gloo's, for
/// host memory), and returns once every process of the group has connected.
pub fn connect(meeting: Meeting<'_>) -> Result<Arc<dyn Collective>> {
    let Meeting { store, address, rank, size, timeout, gone } = meeting;
    let group = gloo::Group::connect(store, address, rank, size, timeout, gone)?;
    group.barrier()?;
    Ok(Arc::new(group))
}

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

/// A part of the gradients a backward pass has finished (`families::bert::train::Tape::backward` hands each over
/// as it finishes it), for the trainer to average across processes with [`Collective::all_reduce_sum`].
pub struct Bucket<'g> {
    /// The gradients: a contiguous range of the master's layout.
    pub values: &'g mut [f32],
    /// Set where `values` holds the word embeddings' gradients: only the rows some token read are not zero.
    pub rows: Option<ReadRows>,
}

/// The word embeddings inside a [`Bucket`]: their range in its `values`, the width of a row, and a bit per row
/// (`read[r / 64] >> (r % 64) & 1`), set for each row a token of this batch read. Every other row of the gradients
/// is zero.
pub struct ReadRows {
    pub range: Range<usize>,
    pub width: usize,
    pub read: Vec<u64>,
}
