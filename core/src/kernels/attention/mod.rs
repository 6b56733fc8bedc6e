//! Self-attention over a batch whose sequences sit side by side in one `[tokens × 3·hidden]` matrix of queries,
//! keys and values: per (sequence, head), `softmax(Q·Kᵀ/√d + bias)·V` under a [`Mask`], a block of query rows at a
//! time so that a thread's scores grow linearly with the length ([`attention_floats`]). Every family's inference
//! pass runs it (BERT's relatives with MPNet's relative bias and ModernBERT's windows, CLIP's causal text tower,
//! the ViTs); [`train`] is the training pass, which keeps the probabilities for its backward pass.

pub(crate) mod train;

use super::gemm::{self, packed_len, Shared};
use super::{Kernels, Lhs};
use crate::error::Result;
use crate::executor::Executor;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Query rows whose scores a thread holds at once: a text of `len` tokens takes `QUERY_BLOCK × len` floats of
/// scores, not `len × len`, so that an 8,192-token ModernBERT text needs 1 MiB of scores a thread, not 256 MiB. Each
/// block's rows are softmaxed and multiplied by the values on their own (a row's softmax needs only its own scores),
/// giving the same floats as one block of every row.
const QUERY_BLOCK: usize = 32;

/// Floats of attention scratch one thread needs for a text of `len` tokens with heads `dh` wide: a block of its
/// scores, its packed keys and values.
pub(crate) fn attention_floats(dh: usize, len: usize) -> usize {
    len.min(QUERY_BLOCK) * len + packed_len(len, dh) + packed_len(dh, len)
}

/// MPNet's bucket of a relative position `d` (key index less query index) among `buckets`, as transformers'
/// `relative_position_bucket` computes it (max distance 128, the logarithm in f32 and truncated).
pub fn relative_bucket(d: i64, buckets: usize) -> usize {
    let half = (buckets / 2) as i64;
    let n = -d;
    let sign = if n < 0 { half } else { 0 };
    let n = n.abs();
    let exact = half / 2;
    let bucket = if n < exact {
        n
    } else {
        let log = (n as f32 / exact as f32).ln() / (128.0f64 / exact as f64).ln() as f32;
        (exact + (log * (half - exact) as f32) as i64).min(half - 1)
    };
    (sign + bucket) as usize
}

/// The keys a query attends to, besides those of its own text alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mask {
    /// Every key of the text.
    All,
    /// Keys at most this many positions away (ModernBERT's local layers).
    Window(usize),
    /// Keys at or before the query's position (CLIP's text tower).
    Causal,
}

/// A pass's widths: `dh`, each head's; `ld`, a row of `qkv` (each token's queries, keys and values side by side);
/// `scale`, the scores' `1/√dh`.
pub(crate) struct Heads {
    pub dh: usize,
    pub ld: usize,
    pub scale: f32,
}

impl Heads {
    /// The widths of `heads` heads in a hidden size of `h`.
    pub fn of(h: usize, heads: usize) -> Heads {
        let dh = h / heads;
        Heads { dh, ld: 3 * h, scale: 1.0 / (dh as f32).sqrt() }
    }
}

/// The (text, head) pairs of a pass ([`for_heads`]), which the threads claim one at a time.
pub(crate) struct Claims<'a> {
    next: &'a AtomicUsize,
    heads: usize,
    tasks: usize,
}

impl Iterator for Claims<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        let task = self.next.fetch_add(1, Ordering::Relaxed);
        (task < self.tasks).then(|| (task / self.heads, task % self.heads))
    }
}

/// Runs `body(mine, claims)` on each of the first `slots` threads: `mine`, that thread's own `per_thread` floats of
/// `scratch`; `claims`, the (text, head) pairs of `texts × heads` it takes, one at a time, as it finishes the last.
/// The dispatch of attention's passes, inference and training alike.
pub(crate) fn for_heads(
    executor: &Executor,
    (texts, heads): (usize, usize),
    (scratch, per_thread, slots): (&mut [f32], usize, usize),
    body: impl Fn(&mut [f32], Claims<'_>) + Sync,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let space = Shared(scratch.as_mut_ptr());
    executor.for_threads(|thread| {
        if thread >= slots {
            return; // the scratch holds `slots` threads' worth
        }
        // SAFETY: each thread index below `slots` owns its `per_thread` floats of scratch.
        let mine = unsafe { space.slice(thread * per_thread, per_thread) };
        body(mine, Claims { next: &next, heads, tasks: texts * heads })
    })
}

/// Self-attention of every (text, head) pair: `softmax(Q·Kᵀ/√d + bias)·V` into `ctx`, over the keys `mask` lets
/// each query see (the bias: `relative`, MPNet's relative position bias `[buckets × heads]` and its bucket count,
/// else none), claimed dynamically by the first `slots` threads, each with its own part of `scratch` for the scores
/// and the packed keys and values. `qkv` holds each token's queries, keys and values, `3 × hidden` a row; `ctx`
/// each token's context, `hidden` a row; `(hidden, heads)` is `shape`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn attention(
    executor: &Executor,
    kernels: &Kernels,
    (h, heads): (usize, usize),
    relative: Option<(&[f32], usize)>,
    qkv: &[f32],
    ctx: &mut [f32],
    spans: &[Range<usize>],
    scratch: &mut [f32],
    per_thread: usize,
    slots: usize,
    mask: Mask,
) -> Result<()> {
    let Heads { dh, ld, scale } = Heads::of(h, heads);
    let out = Shared(ctx.as_mut_ptr());
    for_heads(executor, (spans.len(), heads), (scratch, per_thread, slots), |mine, claims| {
        // A head's relative bias by distance, `len - 1 + d` for `d` in `-(len-1)..len` (MPNet only).
        let mut by_distance = Vec::new();
        for (text, head) in claims {
            let span = spans[text].clone();
            let len = span.len();
            let (scores, rest) = mine.split_at_mut(len.min(QUERY_BLOCK) * len);
            let (keys, rest) = rest.split_at_mut(packed_len(len, dh));
            let values = &mut rest[..packed_len(dh, len)];
            gemm::pack_rows(&qkv[span.start * ld + h + head * dh..], ld, len, dh, keys);
            gemm::pack_columns(&qkv[span.start * ld + 2 * h + head * dh..], ld, len, dh, values);
            if relative.is_some() || mask != Mask::All {
                // Key j of query i is at distance j - i: entry len - 1 - i + j of `by_distance`, the head's
                // relative bias (MPNet), or 0 (ModernBERT's sliding window, which the rows below apply).
                by_distance.clear();
                by_distance.extend((0..2 * len - 1).map(|e| {
                    let d = e as i64 - (len as i64 - 1);
                    match relative {
                        Some((bias, buckets)) => bias[relative_bucket(d, buckets) * heads + head],
                        None => 0.0,
                    }
                }));
            }
            for first in (0..len).step_by(QUERY_BLOCK) {
                let rows = QUERY_BLOCK.min(len - first);
                let block = &mut scores[..rows * len];
                let q = &qkv[(span.start + first) * ld + head * dh..];
                // SAFETY: the block's `rows` query rows are rows of `dh` at stride `ld` inside `qkv` (row
                // `span.start + first` onwards, inside the span); `block` holds `rows × len` scores; the context of
                // this head is columns `head·dh..` of the block's rows, which only this task writes.
                unsafe {
                    gemm::serial(
                        kernels,
                        Lhs::rows(q.as_ptr(), ld),
                        rows,
                        keys,
                        len,
                        dh,
                        block.as_mut_ptr(),
                        len,
                        false,
                    );
                    if by_distance.is_empty() {
                        for row in block.chunks_exact_mut(len) {
                            kernels.softmax(row, scale);
                        }
                    } else {
                        for (r, row) in block.chunks_exact_mut(len).enumerate() {
                            // Keys outside a sliding window (or after a causal query) weigh 0: the softmax runs over
                            // the keys it sees alone.
                            let i = first + r;
                            let (lo, hi) = match mask {
                                Mask::All => (0, len),
                                Mask::Window(w) => (i.saturating_sub(w), (i + w + 1).min(len)),
                                Mask::Causal => (0, i + 1),
                            };
                            let bias = &by_distance[len - 1 - i..];
                            for (v, b) in row[lo..hi].iter_mut().zip(&bias[lo..hi]) {
                                *v = *v * scale + b;
                            }
                            row[..lo].fill(0.0);
                            row[hi..].fill(0.0);
                            kernels.softmax(&mut row[lo..hi], 1.0);
                        }
                    }
                    let c = out.add((span.start + first) * h + head * dh);
                    gemm::serial(kernels, Lhs::rows(block.as_ptr(), len), rows, values, dh, len, c, h, false);
                }
            }
            by_distance.clear();
        }
    })
}

#[cfg(test)]
mod tests;
