//! The BERT encoder's training pass: the forward pass of [`super::forward`] keeping what the backward pass reads
//! (the [`Tape`]), and the backward pass, layer by layer, into the master weights' gradients. Every text's tokens
//! sit side by side in one `[tokens × hidden]` matrix for the dense layers (no padding, as the encoder); attention
//! runs per (text, head). Products reuse the encoder's matrix kernels: `Y = X·Wᵀ` with the packed weights the
//! model encodes with, `dX = dY·W` and `dW = dYᵀ·X` with the right-hand side packed per step.

use super::master::{LayerAt, Master};
use super::params::Params;
use super::Config;
use crate::collective::{Bucket, ReadRows};
use crate::error::Result;
use crate::executor::Executor;
use crate::families::tokenize::Tokens;
use crate::kernels::attention::train as attention;
use crate::kernels::gemm::{dense, dense_strided, Epilogue, Packed, Shared, Stride};
use crate::kernels::ops::{self, Dropout};
use crate::kernels::Kernels;
use std::ops::Range;

/// Dropout sites: the embeddings' output, then per layer the attention probabilities and the two residual branches.
const SITE_EMBEDDINGS: u64 = 0;
fn site(layer: usize, which: u64) -> u64 {
    1 + 3 * layer as u64 + which
}

/// The batch's shape: each text's span of rows.
#[derive(Default)]
struct Shape {
    spans: Vec<Range<usize>>,
    ids: Vec<u32>,
    types: Vec<u32>,
    positions: Vec<u32>,
    /// Where each text's attention probabilities start (`heads · len²` floats per text).
    probs_at: Vec<usize>,
    probs: usize,
    longest: usize,
    /// The width of a token vector.
    width: usize,
}

#[derive(Default)]
struct LayerTape {
    qkv: Vec<f32>,
    probs: Vec<f32>,
    ctx: Vec<f32>,
    hat1: Vec<f32>,
    rstd1: Vec<f32>,
    x1: Vec<f32>,
    u: Vec<f32>,
    g: Vec<f32>,
    hat2: Vec<f32>,
    rstd2: Vec<f32>,
}

/// What one forward pass keeps, and the backward pass's working buffers: grown to the largest batch seen and reused,
/// so memory follows the batch, not the number of steps.
#[derive(Default)]
pub struct Tape {
    shape: Shape,
    /// `inputs[l]` is layer `l`'s input; the last is the encoder's output.
    inputs: Vec<Vec<f32>>,
    emb_hat: Vec<f32>,
    emb_rstd: Vec<f32>,
    layers: Vec<LayerTape>,
    attention: Vec<f32>,
    // The backward pass's buffers.
    dx: Vec<f32>,
    branch: Vec<f32>,
    wide: Vec<f32>,
    dctx: Vec<f32>,
    packed_w: Option<Packed>,
    packed_x: Option<Packed>,
}

fn sized(v: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if v.len() < len {
        v.resize(len, 0.0);
    }
    &mut v[..len]
}

/// The model's weights the passes read: the packed ones the forward pass multiplies by, and the master values.
pub struct TrainWeights<'a> {
    pub config: &'a Config,
    pub params: &'a Params,
    pub master: &'a Master,
}

impl Tape {
    /// Runs the encoder over `tokens`, keeping what [`Tape::backward`] needs; its token vectors are then
    /// [`Tape::output`].
    pub fn forward(
        &mut self,
        executor: &Executor,
        kernels: &Kernels,
        model: &TrainWeights<'_>,
        tokens: &[Tokens],
        dropout: (Dropout, Dropout),
    ) -> Result<()> {
        let (config, params) = (model.config, model.params);
        let (h, heads, inter) = (config.hidden, config.heads, config.intermediate);
        let (hidden_drop, attention_drop) = dropout;
        self.shape = Shape { width: h, ..Shape::default() };
        let s = &mut self.shape;
        for t in tokens {
            let start = s.ids.len();
            s.spans.push(start..start + t.ids.len());
            s.ids.extend(&t.ids);
            s.types.extend(&t.type_ids);
            s.positions.extend(0..t.ids.len() as u32);
            s.probs_at.push(s.probs);
            s.probs += heads * t.ids.len() * t.ids.len();
            s.longest = s.longest.max(t.ids.len());
        }
        let total = s.ids.len();
        self.inputs.resize_with(config.layers + 1, Vec::new);
        self.layers.resize_with(config.layers, LayerTape::default);

        // Embeddings: word + position + token type, LayerNorm, dropout.
        let shape = &self.shape;
        let x = sized(&mut self.inputs[0], total * h);
        ops::rows_mut(executor, x, h, total, |r, row| {
            params.embed(shape.ids[r] as usize, shape.positions[r] as usize, shape.types[r] as usize, row)
        })?;
        let (hat, rstd) = (sized(&mut self.emb_hat, total * h), sized(&mut self.emb_rstd, total));
        let ln = (&params.embedding_ln.0[..], &params.embedding_ln.1[..]);
        ops::layer_norm_keep(executor, x, hat, rstd, total, ln, config.layer_norm_eps)?;
        if hidden_drop.active() {
            ops::rows_mut(executor, x, h, total, |r, row| hidden_drop.apply(SITE_EMBEDDINGS, (r * h) as u64, row))?;
        }

        let per_thread = attention::forward_scratch(shape.longest, config.head_dim());
        let attention = sized(&mut self.attention, executor.threads() * per_thread);
        let texts = (&shape.spans[..], &shape.probs_at[..]);
        let pass = attention::Pass { executor, kernels, shape: (h, heads), texts, per_thread };
        for (l, (layer, tape)) in params.layers.iter().zip(self.layers.iter_mut()).enumerate() {
            let (before, after) = self.inputs.split_at_mut(l + 1);
            let x = &before[l][..total * h];
            let qkv = sized(&mut tape.qkv, total * 3 * h);
            dense(executor, kernels, x, total, &layer.qkv, qkv, Epilogue::Bias(&layer.qkv_bias))?;
            let probs = sized(&mut tape.probs, shape.probs);
            let ctx = sized(&mut tape.ctx, total * h);
            let drop = (attention_drop, site(l, 0));
            attention::forward(pass, drop, qkv, probs, ctx, attention)?;
            // x1 = LayerNorm(x + dropout(ctx·Woᵀ + bo)).
            let x1 = sized(&mut tape.x1, total * h);
            dense(executor, kernels, ctx, total, &layer.out, x1, Epilogue::Bias(&layer.out_bias))?;
            residual(executor, x1, x, h, total, hidden_drop, site(l, 1))?;
            let (hat1, rstd1) = (sized(&mut tape.hat1, total * h), sized(&mut tape.rstd1, total));
            ops::layer_norm_keep(
                executor,
                x1,
                hat1,
                rstd1,
                total,
                (&layer.ln1.0, &layer.ln1.1),
                config.layer_norm_eps,
            )?;
            // x2 = LayerNorm(x1 + dropout(gelu(x1·Wuᵀ + bu)·Wdᵀ + bd)).
            let u = sized(&mut tape.u, total * inter);
            dense(executor, kernels, x1, total, &layer.up, u, Epilogue::Bias(&layer.up_bias))?;
            let g = sized(&mut tape.g, total * inter);
            ops::rows_mut(executor, g, inter, total, |r, row| {
                row.copy_from_slice(&u[r * inter..(r + 1) * inter]);
                kernels.gelu(row)
            })?;
            let x2 = sized(&mut after[0], total * h);
            dense(executor, kernels, g, total, &layer.down, x2, Epilogue::Bias(&layer.down_bias))?;
            residual(executor, x2, x1, h, total, hidden_drop, site(l, 2))?;
            let (hat2, rstd2) = (sized(&mut tape.hat2, total * h), sized(&mut tape.rstd2, total));
            ops::layer_norm_keep(
                executor,
                x2,
                hat2,
                rstd2,
                total,
                (&layer.ln2.0, &layer.ln2.1),
                config.layer_norm_eps,
            )?;
        }

        Ok(())
    }

    /// The last forward pass's token vectors, `[tokens × hidden]`, and each text's span of rows.
    pub fn output(&self) -> (&[f32], &[Range<usize>]) {
        let total = self.shape.ids.len();
        let out = self.inputs.last().map_or(&[][..], |x| &x[..total * self.shape.width]);
        (out, &self.shape.spans)
    }

    /// Where [`Tape::backward`] starts: the gradient of each of the last forward pass's token vectors, for its
    /// caller to write (every element), and each text's span of rows.
    pub fn output_gradient(&mut self) -> (&mut [f32], &[Range<usize>]) {
        let len = self.shape.ids.len() * self.shape.width;
        (sized(&mut self.dx, len), &self.shape.spans)
    }

    /// From the gradient of the token vectors ([`Tape::output_gradient`]), the gradient of every master weight the
    /// forward pass used, written into `grads` (the master's layout; tensors the pass does not reach are left as they
    /// are).
    ///
    /// The pass runs from the last layer down, and each part of `grads` is final once its layer is done: `done`
    /// gets it then — the last layer's range first, the embeddings' (from 0) last, each exactly once, together
    /// covering `grads` — so a caller can average it across processes while the pass goes on. The embeddings'
    /// bucket says which rows of the word embeddings the batch read ([`ReadRows`]), so that the caller need not
    /// average the rest, which are zero. The pass never touches a range again after handing it over; the borrow
    /// checker holds it to that, as each is split off.
    #[allow(clippy::too_many_arguments)]
    pub fn backward<'g>(
        &mut self,
        executor: &Executor,
        kernels: &Kernels,
        model: &TrainWeights<'_>,
        dropout: (Dropout, Dropout),
        mut grads: &'g mut [f32],
        done: &mut dyn FnMut(Bucket<'g>),
    ) -> Result<()> {
        let (config, master) = (model.config, model.master);
        let (h, inter) = (config.hidden, config.intermediate);
        let (hidden_drop, attention_drop) = dropout;
        let shape = &self.shape;
        let total = shape.ids.len();
        let dx = &mut self.dx[..total * h];

        let packed_w = self.packed_w.get_or_insert_with(Packed::empty);
        let packed_x = self.packed_x.get_or_insert_with(Packed::empty);
        let per_thread = attention::backward_scratch(shape.longest, config.head_dim());
        let attention = sized(&mut self.attention, executor.threads() * per_thread);
        let texts = (&shape.spans[..], &shape.probs_at[..]);
        let pass = attention::Pass { executor, kernels, shape: (h, config.heads), texts, per_thread };
        for l in (0..config.layers).rev() {
            let (tape, at) = (&self.layers[l], &master.layers[l]);
            let x = &self.inputs[l][..total * h];
            let ctx = Context { executor, kernels, total };
            // x2 = LN2(r2): dr2.
            let (dg2, db2) = pair(grads, &at.ln2.0, &at.ln2.1);
            ops::layer_norm_backward(
                executor,
                dx,
                &tape.hat2,
                &tape.rstd2,
                total,
                master.value(&at.ln2.0),
                (dg2, db2),
            )?;
            // r2 = x1 + dropout(d): the branch's gradient.
            let branch = sized(&mut self.branch, total * h);
            masked_copy(executor, dx, branch, h, total, hidden_drop, site(l, 2))?;
            let wide = sized(&mut self.wide, total * (3 * h).max(inter));
            // d = g·Wdᵀ + bd.
            let dg = &mut wide[..total * inter];
            let into = (&mut dg[..], Epilogue::Plain);
            ctx.linear_backward(branch, &tape.g, at, Linear::Down, master, grads, into, packed_w, packed_x)?;
            // g = gelu(u).
            ops::rows_mut(executor, dg, inter, total, |r, row| {
                kernels.gelu_backward(row, &tape.u[r * inter..(r + 1) * inter])
            })?;
            // u = x1·Wuᵀ + bu; dx1 = dr2 + du·Wu.
            let into = (&mut dx[..], Epilogue::Accumulate);
            ctx.linear_backward(dg, &tape.x1, at, Linear::Up, master, grads, into, packed_w, packed_x)?;
            // x1 = LN1(r1): dr1.
            let (dg1, db1) = pair(grads, &at.ln1.0, &at.ln1.1);
            ops::layer_norm_backward(
                executor,
                dx,
                &tape.hat1,
                &tape.rstd1,
                total,
                master.value(&at.ln1.0),
                (dg1, db1),
            )?;
            // r1 = x + dropout(a), a = ctx·Woᵀ + bo.
            masked_copy(executor, dx, branch, h, total, hidden_drop, site(l, 1))?;
            let dctx = sized(&mut self.dctx, total * h);
            let into = (&mut dctx[..], Epilogue::Plain);
            ctx.linear_backward(branch, &tape.ctx, at, Linear::Out, master, grads, into, packed_w, packed_x)?;
            // Attention: dqkv.
            let dqkv = &mut wide[..total * 3 * h];
            let drop = (attention_drop, site(l, 0));
            attention::backward(pass, drop, &tape.qkv, &tape.probs, dctx, dqkv, attention)?;
            // qkv = x·Wqkvᵀ + b; dx = dr1 + dqkv·Wqkv.
            let into = (&mut dx[..], Epilogue::Accumulate);
            ctx.linear_backward(dqkv, x, at, Linear::Qkv, master, grads, into, packed_w, packed_x)?;
            // Layer `l` is done; what remains (the layers below and the embeddings) starts at 0 as before.
            let (rest, layer) = std::mem::take(&mut grads).split_at_mut(master.layer_start(l));
            grads = rest;
            done(Bucket { values: layer, rows: None });
        }

        // Embeddings: dropout, LayerNorm, then each table's rows.
        if hidden_drop.active() {
            ops::rows_mut(executor, dx, h, total, |r, row| hidden_drop.apply(SITE_EMBEDDINGS, (r * h) as u64, row))?;
        }
        let e = &master.embeddings;
        let (dg, db) = pair(grads, &e.ln.0, &e.ln.1);
        ops::layer_norm_backward(executor, dx, &self.emb_hat, &self.emb_rstd, total, master.value(&e.ln.0), (dg, db))?;
        scatter_rows(executor, grads, [&e.word, &e.position, &e.token_type], shape, dx, h)?;
        let mut read = vec![0u64; (e.word.len() / h).div_ceil(64)];
        for &id in &shape.ids {
            read[id as usize / 64] |= 1 << (id % 64);
        }
        done(Bucket { values: grads, rows: Some(ReadRows { range: e.word.clone(), width: h, read }) });
        Ok(())
    }
}

/// Adds each token's embedding gradient to the row of each table it read, tables split over the threads.
fn scatter_rows(
    executor: &Executor,
    grads: &mut [f32],
    tables: [&Range<usize>; 3],
    shape: &Shape,
    dx: &[f32],
    h: usize,
) -> Result<()> {
    for t in tables {
        grads[t.clone()].fill(0.0);
    }
    let out = Shared(grads.as_mut_ptr());
    executor.for_n_dynamic(3, |which| {
        let table = tables[which];
        let index = [&shape.ids, &shape.positions, &shape.types][which];
        for (t, &row) in index.iter().enumerate() {
            let at = table.start + row as usize * h;
            assert!(at + h <= table.end, "a token's row {row} is past its table");
            // SAFETY: the row lies inside this table's range (asserted), which only this task writes.
            let dst = unsafe { out.slice(at, h) };
            for (d, v) in dst.iter_mut().zip(&dx[t * h..(t + 1) * h]) {
                *d += *v;
            }
        }
    })
}

/// Two disjoint tensors of the flat gradients, `a` before `b`.
fn pair<'g>(grads: &'g mut [f32], a: &Range<usize>, b: &Range<usize>) -> (&'g mut [f32], &'g mut [f32]) {
    assert!(a.end <= b.start, "pair: {a:?} must precede {b:?}");
    let (first, second) = grads.split_at_mut(b.start);
    (&mut first[a.clone()], &mut second[..b.len()])
}

/// `y += x` after `y`'s dropout: the residual connection of a branch held in `y`.
fn residual(
    executor: &Executor,
    y: &mut [f32],
    x: &[f32],
    h: usize,
    total: usize,
    drop: Dropout,
    at: u64,
) -> Result<()> {
    ops::rows_mut(executor, y, h, total, |r, row| {
        drop.apply(at, (r * h) as u64, row);
        for (a, b) in row.iter_mut().zip(&x[r * h..(r + 1) * h]) {
            *a += *b;
        }
    })
}

/// `dst = src ⊙ mask`: a branch's gradient through its dropout.
fn masked_copy(
    executor: &Executor,
    src: &[f32],
    dst: &mut [f32],
    h: usize,
    total: usize,
    drop: Dropout,
    at: u64,
) -> Result<()> {
    ops::rows_mut(executor, dst, h, total, |r, row| {
        row.copy_from_slice(&src[r * h..(r + 1) * h]);
        drop.apply(at, (r * h) as u64, row);
    })
}

#[derive(Clone, Copy)]
enum Linear {
    Qkv,
    Out,
    Up,
    Down,
}

struct Context<'a> {
    executor: &'a Executor,
    kernels: &'a Kernels,
    total: usize,
}

impl Context<'_> {
    /// The backward pass of `Y = X·Wᵀ + b` for layer `at`'s `which`: `dW = dYᵀ·X` and `db = Σ dY` into `grads`, and
    /// `dY·W` into `dx` through its epilogue (added to it, or written over it).
    #[allow(clippy::too_many_arguments)]
    fn linear_backward(
        &self,
        dy: &[f32],
        x: &[f32],
        at: &LayerAt,
        which: Linear,
        master: &Master,
        grads: &mut [f32],
        (dx, epilogue): (&mut [f32], Epilogue<'_>),
        packed_w: &mut Packed,
        packed_x: &mut Packed,
    ) -> Result<()> {
        let (w, b) = match which {
            Linear::Qkv => (&at.qkv, &at.qkv_bias),
            Linear::Out => (&at.out, &at.out_bias),
            Linear::Up => (&at.up, &at.up_bias),
            Linear::Down => (&at.down, &at.down_bias),
        };
        let n = b.len(); // outputs
        let k = w.len() / n; // inputs
        let (ex, kernels, total) = (self.executor, self.kernels, self.total);
        let (dy, x) = (&dy[..total * n], &x[..total * k]);
        ops::column_sums(ex, dy, total, n, &mut grads[b.clone()])?;
        // dW[n × k] = dYᵀ[n × T] · X[T × k], dY read by columns.
        packed_x.columns_from(ex, x, k, total, k)?;
        dense_strided(ex, kernels, dy, Stride::Columns(n), n, packed_x, &mut grads[w.clone()], Epilogue::Plain)?;
        // dX[T × k] (+)= dY[T × n] · W[n × k].
        packed_w.columns_from(ex, master.value(w), k, n, k)?;
        dense(ex, kernels, dy, total, packed_w, &mut dx[..total * k], epilogue)
    }
}
