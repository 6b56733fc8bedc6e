//! sentence-transformers' Pooling and Normalize modules over an encoder's token vectors: one row per text, the mean
//! of its tokens or its first token's, scaled to unit length when asked; and pooling's backward pass for the
//! trainer. The families stop at the token vectors; every verb pools here.

use crate::error::Result;
use crate::executor::Executor;
use crate::families::bert::Pooling;
use crate::kernels::gemm::Shared;
use crate::kernels::{ops, Kernels};
use std::ops::Range;

/// Pools each text's token vectors (`hidden`: rows of `h`, text `i`'s at rows `spans[i]`) into row `rows[i]` of
/// `out`, as `pooling` says, then normalises the row when `normalize` says so.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pool(
    executor: &Executor,
    kernels: &Kernels,
    pooling: Pooling,
    (hidden, h): (&[f32], usize),
    spans: &[Range<usize>],
    rows: &[usize],
    normalize: bool,
    out: &mut [f32],
) -> Result<()> {
    assert_eq!(spans.len(), rows.len(), "pool: one output row per text");
    assert!(rows.iter().all(|r| (r + 1) * h <= out.len()), "pool: an output row past the matrix");
    let out = Shared(out.as_mut_ptr());
    executor.for_n(spans.len(), |text| {
        // SAFETY: row `rows[text]` is inside `out` (asserted above) and this task's alone: a call names each output
        // row once.
        let row = unsafe { out.slice(rows[text] * h, h) };
        let span = spans[text].clone();
        match pooling {
            Pooling::Cls => row.copy_from_slice(&hidden[span.start * h..span.start * h + h]),
            Pooling::Mean => {
                row.fill(0.0);
                for t in span.clone() {
                    kernels.add(row, &hidden[t * h..t * h + h]);
                }
                kernels.scale(row, 1.0 / span.len().max(1) as f32);
            }
        }
        if normalize {
            kernels.normalize(row);
        }
    })
}

/// Pooling's backward pass: from the gradient of each pooled row (`dpooled`, text `i`'s at row `i`), the gradient of
/// every token vector, written into `dhidden` (rows of `h`; the tokens pooling did not read get zeros).
pub(crate) fn pool_backward(
    executor: &Executor,
    pooling: Pooling,
    h: usize,
    spans: &[Range<usize>],
    dpooled: &[f32],
    dhidden: &mut [f32],
) -> Result<()> {
    let total = spans.last().map_or(0, |s| s.end);
    assert!(dhidden.len() >= total * h, "pool_backward: {} floats for {total} rows of {h}", dhidden.len());
    ops::rows_mut(executor, dhidden, h, total, |_, row| row.fill(0.0))?;
    let rows = Shared(dhidden.as_mut_ptr());
    executor.for_n(spans.len(), |text| {
        let span = spans[text].clone();
        let d = &dpooled[text * h..(text + 1) * h];
        let (targets, factor) = match pooling {
            Pooling::Cls => (span.start..span.start + 1, 1.0),
            Pooling::Mean => (span.clone(), 1.0 / span.len().max(1) as f32),
        };
        for t in targets {
            // SAFETY: row `t` is inside `dhidden` (asserted above) and belongs to this text's span alone.
            let row = unsafe { rows.slice(t * h, h) };
            for (o, v) in row.iter_mut().zip(d) {
                *o = v * factor;
            }
        }
    })
}
