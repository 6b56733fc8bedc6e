//! One batch through the encoder's training pass ([`Tape`]) with sentence-transformers' pooling around it: the
//! family's pass stops at the token vectors, and the verb pools them (and, backward, spreads each pooled row's
//! gradient over the tokens it read) as [`crate::verbs::encode`] does.

use crate::collective::Bucket;
use crate::error::Result;
use crate::executor::Executor;
use crate::families::bert::train::{Tape, TrainWeights};
use crate::families::tokenize::Tokens;
use crate::kernels::ops::Dropout;
use crate::kernels::Kernels;
use crate::verbs::encode::pool::{pool, pool_backward};

/// Runs the encoder over `tokens` on `tape`, keeping what [`backward_pooled`] needs, and pools text `i` into row
/// `i` of `pooled`.
pub(super) fn forward_pooled(
    tape: &mut Tape,
    (executor, kernels): (&Executor, &Kernels),
    model: &TrainWeights<'_>,
    tokens: &[Tokens],
    dropout: (Dropout, Dropout),
    pooled: &mut [f32],
) -> Result<()> {
    tape.forward(executor, kernels, model, tokens, dropout)?;
    let (hidden, spans) = tape.output();
    let rows: Vec<usize> = (0..spans.len()).collect();
    let (pooling, h) = (model.config.pooling, model.config.hidden);
    pool(executor, kernels, pooling, (hidden, h), spans, &rows, false, pooled)
}

/// From the gradient of each pooled row (`dpooled`), the gradient of every master weight, into `grads`, handing each
/// finished part to `done` ([`Tape::backward`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn backward_pooled<'g>(
    tape: &mut Tape,
    (executor, kernels): (&Executor, &Kernels),
    model: &TrainWeights<'_>,
    dropout: (Dropout, Dropout),
    dpooled: &[f32],
    grads: &'g mut [f32],
    done: &mut dyn FnMut(Bucket<'g>),
) -> Result<()> {
    let (dhidden, spans) = tape.output_gradient();
    pool_backward(executor, model.config.pooling, model.config.hidden, spans, dpooled, dhidden)?;
    tape.backward(executor, kernels, model, dropout, grads, done)
}
