//! What the processes of a trainer's mesh do together in a step: agree that every one steps alike ([`agree`]), then
//! average the gradients ([`backward_averaged`]) in buckets while the backward pass still runs, as torch's
//! DistributedDataParallel does.

use crate::collective::Collective;
use crate::collective::{Bucket, ReadRows};
use crate::error::{Error, Result};
use std::sync::mpsc;
use std::time::Instant;

/// What the collectives of one step cost, in seconds: for benchmarks, not in the IDL.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CollectiveSeconds {
    /// The agreement before the forward pass (one small all-gather).
    pub agreement: f64,
    /// The gradients' all-reduce, bucket by bucket, on its own thread.
    pub all_reduce: f64,
    /// How long the step waited for the all-reduce after its backward pass: the part that did not overlap it.
    pub waited: f64,
}

impl CollectiveSeconds {
    /// Every second spent in collectives.
    pub fn total(&self) -> f64 {
        self.agreement + self.all_reduce
    }

    /// The share of the all-reduce that ran while the backward pass did (0 with nothing to reduce).
    pub fn overlap(&self) -> f64 {
        if self.all_reduce > 0.0 {
            ((self.all_reduce - self.waited) / self.all_reduce).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
}

/// Checks, across the processes of `collective`, that every one is at step `step` with `pairs` pairs and a batch it
/// could tokenise, so that no process averages with a peer that steps differently or not at all. Every process
/// learns the same answer, so all fail alike; alone, only `tokens` can fail.
pub(super) fn agree<T>(collective: &dyn Collective, step: u64, pairs: usize, tokens: Result<T>) -> Result<T> {
    if collective.size() == 1 {
        return tokens;
    }
    let all = collective.all_gather(&[step, pairs as u64, tokens.is_ok() as u64])?;
    let tokens = tokens?;
    let ranks: Vec<&[u64]> = all.chunks(3).collect();
    if let Some((rank, _)) = ranks.iter().enumerate().find(|(_, r)| r[2] == 0) {
        return Err(Error::invalid_argument(
            "anchors",
            format!("were refused by rank {rank} of the mesh, so no process took this step; see that process's error"),
        ));
    }
    if let Some((rank, r)) = ranks.iter().enumerate().find(|(_, r)| r[0] != step || r[1] != pairs as u64) {
        return Err(Error::invalid_argument(
            "anchors",
            format!(
                "hold {pairs} pairs at step {step} on rank {} of the mesh, but rank {rank} has {} pairs at step {}; \
                 every process of a mesh steps together with the same number of pairs",
                collective.rank(),
                r[1],
                r[0]
            ),
        ));
    }
    Ok(tokens)
}

/// Runs `backward`, which hands each part of the gradients to the function it is given once that part is final;
/// a thread of this step's own averages each part across the processes of `collective` meanwhile ([`average`]), so
/// the all-reduce of the last layers overlaps the backward pass of the first. Every process runs the same backward
/// pass, so all hand the same parts in the same order, as the collectives need. Returns the pass's result (its
/// error first, then the all-reduce's) and the all-reduce's seconds; alone it only runs the pass.
pub(super) fn backward_averaged<'g>(
    collective: &dyn Collective,
    backward: impl FnOnce(&mut dyn FnMut(Bucket<'g>)) -> Result<()>,
) -> (Result<()>, f64, f64) {
    if collective.size() == 1 {
        return (backward(&mut |_| {}), 0.0, 0.0);
    }
    std::thread::scope(|scope| {
        let (sender, buckets) = mpsc::channel::<Bucket<'g>>();
        let reducer = std::thread::Builder::new().name("uform-all-reduce".into()).spawn_scoped(scope, move || {
            let mut busy = 0.0;
            let mut failed = None;
            for bucket in buckets {
                // After a failure the group is broken: the rest are received (the pass goes on) but not sent.
                if failed.is_some() {
                    continue;
                }
                let started = Instant::now();
                if let Err(e) = average(collective, bucket) {
                    failed = Some(e);
                }
                busy += started.elapsed().as_secs_f64();
            }
            (busy, failed)
        });
        let reducer = match reducer {
            Ok(reducer) => reducer,
            Err(e) => {
                let why = format!("could not start the thread that averages gradients across the mesh: {e}");
                return (Err(Error::unavailable(why)), 0.0, 0.0);
            }
        };
        // The receiver lives until every bucket is taken, so a send fails only if its thread panicked, which the
        // join below reports.
        let passed = backward(&mut |bucket| drop(sender.send(bucket)));
        drop(sender);
        let waiting = Instant::now();
        let (busy, failed) = reducer.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let waited = waiting.elapsed().as_secs_f64();
        let result = passed.and_then(|()| failed.map_or(Ok(()), Err));
        (result, busy, waited)
    })
}

/// Averages one bucket across the processes of `collective`: the sum, then divided by the number of processes, in
/// fp32. In the word embeddings' part ([`ReadRows`]) only the rows some process read are summed: the processes
/// gather which rows each read, then sum those rows, side by side in one buffer, in ascending order. Every other row
/// is zero in every process, so its average is zero, as it already is, and the result is the dense average's.
pub(super) fn average(collective: &dyn Collective, bucket: Bucket<'_>) -> Result<()> {
    let scale = 1.0 / collective.size() as f32;
    let sum = |values: &mut [f32]| -> Result<()> {
        if !values.is_empty() {
            collective.all_reduce_sum(values)?;
            values.iter_mut().for_each(|g| *g *= scale);
        }
        Ok(())
    };
    let Some(ReadRows { range, width, read }) = bucket.rows else {
        return sum(bucket.values);
    };
    let (before, rest) = bucket.values.split_at_mut(range.start);
    let (table, after) = rest.split_at_mut(range.len());
    sum(before)?;
    sum(after)?;
    let all = collective.all_gather(&read)?;
    if all.len() != read.len() * collective.size() {
        return Err(Error::conflict(format!(
            "the processes of the mesh train word embeddings of different sizes ({} rows here); every process of a \
             mesh must train the same model",
            table.len() / width
        )));
    }
    let mut union = read;
    for theirs in all.chunks(union.len()) {
        union.iter_mut().zip(theirs).for_each(|(u, t)| *u |= t);
    }
    let rows: Vec<usize> = (0..table.len() / width).filter(|r| union[r / 64] >> (r % 64) & 1 == 1).collect();
    let mut gathered = Vec::with_capacity(rows.len() * width);
    for r in &rows {
        gathered.extend_from_slice(&table[r * width..(r + 1) * width]);
    }
    sum(&mut gathered)?;
    for (r, values) in rows.iter().zip(gathered.chunks_exact(width)) {
        table[r * width..(r + 1) * width].copy_from_slice(values);
    }
    Ok(())
}
