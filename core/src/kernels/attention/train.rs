//! Attention's training pass: the forward pass keeping each (sequence, head)'s probabilities for the backward pass
//! (`heads · len²` floats per sequence, from `probs_at[sequence]`), with dropout on them, and the backward pass
//! from the context's gradient to the queries', keys' and values'.

use super::{for_heads, Heads};
use crate::error::Result;
use crate::executor::Executor;
use crate::kernels::gemm::{self, packed_len, Shared};
use crate::kernels::ops::Dropout;
use crate::kernels::{Kernels, Lhs};
use std::ops::Range;

/// Floats of per-thread scratch attention's forward pass needs for texts of up to `longest` tokens.
pub(crate) fn forward_scratch(longest: usize, dh: usize) -> usize {
    longest * longest + packed_len(longest, dh) + packed_len(dh, longest)
}

pub(crate) fn backward_scratch(longest: usize, dh: usize) -> usize {
    (2 * longest * longest + packed_len(longest, dh).max(packed_len(dh, longest))).max(forward_scratch(longest, dh))
}

/// What a layer's forward and backward passes share: the executor and kernels, the widths `(hidden, heads)`, the
/// texts' spans and where each text's probabilities start, and how many floats of scratch each thread takes.
#[derive(Clone, Copy)]
pub(crate) struct Pass<'a> {
    pub executor: &'a Executor,
    pub kernels: &'a Kernels,
    pub shape: (usize, usize),
    pub texts: (&'a [Range<usize>], &'a [usize]),
    pub per_thread: usize,
}

impl Pass<'_> {
    /// Runs `task(mine, span, head, first)` for every (text, head) on every thread: `mine`, the thread's own part
    /// of `scratch`; `first`, where this (text, head)'s `len²` probabilities start.
    fn for_heads(
        self,
        scratch: &mut [f32],
        task: impl Fn(&mut [f32], Range<usize>, usize, usize) + Sync,
    ) -> Result<()> {
        let ((spans, probs_at), heads) = (self.texts, self.shape.1);
        let slots = (scratch, self.per_thread, self.executor.threads());
        for_heads(self.executor, (spans.len(), heads), slots, |mine, claims| {
            for (text, head) in claims {
                let len = spans[text].len();
                task(&mut *mine, spans[text].clone(), head, probs_at[text] + head * len * len);
            }
        })
    }
}

/// Self-attention of every (text, head): `P = softmax(Q·Kᵀ/√d)` kept in `probs`, `ctx = dropout(P)·V`.
pub(crate) fn forward(
    pass: Pass<'_>,
    (drop, at): (Dropout, u64),
    qkv: &[f32],
    probs: &mut [f32],
    ctx: &mut [f32],
    scratch: &mut [f32],
) -> Result<()> {
    let Pass { kernels, shape: (h, heads), .. } = pass;
    let Heads { dh, ld, scale } = Heads::of(h, heads);
    let (out, kept) = (Shared(ctx.as_mut_ptr()), Shared(probs.as_mut_ptr()));
    pass.for_heads(scratch, |mine, span, head, first| {
        let len = span.len();
        // SAFETY: this (text, head)'s `len²` probabilities start at `first`, inside `probs`, and are its alone.
        let p = unsafe { kept.slice(first, len * len) };
        let (dropped, rest) = mine.split_at_mut(len * len);
        let (keys, rest) = rest.split_at_mut(packed_len(len, dh));
        let values = &mut rest[..packed_len(dh, len)];
        let q = &qkv[span.start * ld + head * dh..];
        gemm::pack_rows(&qkv[span.start * ld + h + head * dh..], ld, len, dh, keys);
        gemm::pack_columns(&qkv[span.start * ld + 2 * h + head * dh..], ld, len, dh, values);
        // SAFETY: Q's rows are `len` rows of `dh` at stride `ld` inside `qkv`; `p` is `len × len`; the context
        // of this head is columns `head·dh..` of the span's rows, which only this task writes.
        unsafe {
            gemm::serial(kernels, Lhs::rows(q.as_ptr(), ld), len, keys, len, dh, p.as_mut_ptr(), len, false);
            for row in p.chunks_exact_mut(len) {
                kernels.softmax(row, scale);
            }
            let c = out.add(span.start * h + head * dh);
            let used: &[f32] = if drop.active() {
                dropped.copy_from_slice(p);
                drop.apply(at, first as u64, dropped);
                dropped
            } else {
                p
            };
            gemm::serial(kernels, Lhs::rows(used.as_ptr(), len), len, values, dh, len, c, h, false);
        }
    })
}

/// Attention's backward pass per (text, head), from `dctx` into `dqkv` (every element written):
/// `dV = P'ᵀ·dC`, `dP' = dC·Vᵀ`, `dP = dP' ⊙ mask`, `dS = P ⊙ (dP − rowsum(dP ⊙ P)) / √d`, `dQ = dS·K`, `dK = dSᵀ·Q`.
pub(crate) fn backward(
    pass: Pass<'_>,
    (drop, at): (Dropout, u64),
    qkv: &[f32],
    probs: &[f32],
    dctx: &[f32],
    dqkv: &mut [f32],
    scratch: &mut [f32],
) -> Result<()> {
    let Pass { kernels, shape: (h, heads), .. } = pass;
    let Heads { dh, ld, scale } = Heads::of(h, heads);
    let out = Shared(dqkv.as_mut_ptr());
    pass.for_heads(scratch, |mine, span, head, first| {
        let len = span.len();
        let p = &probs[first..first + len * len];
        let (a, rest) = mine.split_at_mut(len * len);
        let (dp, rest) = rest.split_at_mut(len * len);
        let packed = &mut rest[..packed_len(len, dh).max(packed_len(dh, len))];
        let row0 = span.start * ld + head * dh;
        let (q, k, v) = (&qkv[row0..], &qkv[row0 + h..], &qkv[row0 + 2 * h..]);
        let dc = &dctx[span.start * h + head * dh..];
        // SAFETY: every product reads `len` rows at the strides of `qkv` (`ld`) and `dctx` (`h`) from this span,
        // and writes this head's `dh` columns of the span's rows in `dqkv`, which only this task writes;
        // `a`, `dp` and `packed` are this thread's scratch, sized for `len` by `backward_scratch`.
        unsafe {
            let (dq, dk, dv) = (out.add(row0), out.add(row0 + h), out.add(row0 + 2 * h));
            // dV = P'ᵀ · dC, P' = P through the dropout, read by columns.
            let kept = if drop.active() {
                a.copy_from_slice(p);
                drop.apply(at, first as u64, a);
                &a[..]
            } else {
                p
            };
            gemm::pack_columns(dc, h, len, dh, packed);
            gemm::serial(kernels, Lhs::columns(kept.as_ptr(), len), len, packed, dh, len, dv, ld, false);
            // dP' = dC · Vᵀ, then through the dropout.
            gemm::pack_rows(v, ld, len, dh, packed);
            gemm::serial(kernels, Lhs::rows(dc.as_ptr(), h), len, packed, len, dh, dp.as_mut_ptr(), len, false);
            drop.apply(at, first as u64, dp);
            // dS, in place of dP.
            for (drow, prow) in dp.chunks_exact_mut(len).zip(p.chunks_exact(len)) {
                let along: f32 = drow.iter().zip(prow).map(|(d, p)| d * p).sum();
                for (d, p) in drow.iter_mut().zip(prow) {
                    *d = p * (*d - along) * scale;
                }
            }
            // dQ = dS · K.
            gemm::pack_columns(k, ld, len, dh, packed);
            gemm::serial(kernels, Lhs::rows(dp.as_ptr(), len), len, packed, dh, len, dq, ld, false);
            // dK = dSᵀ · Q, dS read by columns.
            gemm::pack_columns(q, ld, len, dh, packed);
            gemm::serial(kernels, Lhs::columns(dp.as_ptr(), len), len, packed, dh, len, dk, ld, false);
        }
    })
}
