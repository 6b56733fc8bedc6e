//! The trainer's own copy of a BERT encoder's weights: fp32 master values, their gradients and AdamW's two moments,
//! each one flat buffer with every tensor at a fixed offset, so the optimiser, the gradient norm and clipping are
//! one pass over contiguous memory. Query, key and value sit side by side, so their three matrices are the fused
//! `[3·hidden × hidden]` matrix the forward pass multiplies by, and their biases one vector.

use super::params::{Layer, Params, Table};
use super::Config;
use crate::error::Result;
use crate::executor::Executor;
use crate::kernels::gemm::{Packed, Shared};
use crate::kernels::math::AdamW;
use crate::kernels::Kernels;
use crate::model::dtype::{decode, view};
use crate::model::Weights;
use std::ops::Range;

/// One tensor of the flat buffers: its name in the checkpoint, shape, place, and whether AdamW decays it (every
/// weight but biases and LayerNorm weights, as the Hugging Face trainer groups them).
#[derive(Clone, Debug)]
pub struct Tensor {
    pub name: String,
    pub shape: Vec<usize>,
    pub range: Range<usize>,
    pub decay: bool,
}

/// Where one layer's tensors are in the flat buffers.
#[derive(Clone, Debug)]
pub struct LayerAt {
    pub qkv: Range<usize>,
    pub qkv_bias: Range<usize>,
    pub out: Range<usize>,
    pub out_bias: Range<usize>,
    pub ln1: (Range<usize>, Range<usize>),
    pub up: Range<usize>,
    pub up_bias: Range<usize>,
    pub down: Range<usize>,
    pub down_bias: Range<usize>,
    pub ln2: (Range<usize>, Range<usize>),
}

/// Where the embeddings' tensors are.
#[derive(Clone, Debug)]
pub struct EmbeddingsAt {
    pub word: Range<usize>,
    pub position: Range<usize>,
    pub token_type: Range<usize>,
    pub ln: (Range<usize>, Range<usize>),
}

/// The master weights and the optimiser's state.
pub struct Master {
    pub tensors: Vec<Tensor>,
    pub embeddings: EmbeddingsAt,
    pub layers: Vec<LayerAt>,
    pub values: Vec<f32>,
    pub grads: Vec<f32>,
    pub m: Vec<f32>,
    pub v: Vec<f32>,
}

struct Layout {
    tensors: Vec<Tensor>,
    len: usize,
}

impl Layout {
    fn add(&mut self, name: String, shape: &[usize], decay: bool) -> Range<usize> {
        let len: usize = shape.iter().product();
        let range = self.len..self.len + len;
        self.len += len;
        self.tensors.push(Tensor { name, shape: shape.to_vec(), range: range.clone(), decay });
        range
    }

    /// Consecutive tensors as one range.
    fn group(&mut self, names: [String; 3], shape: &[usize], decay: bool) -> Range<usize> {
        let [a, b, c] = names;
        let start = self.add(a, shape, decay).start;
        self.add(b, shape, decay);
        start..self.add(c, shape, decay).end
    }
}

impl Master {
    /// The tensors' names and shapes in the master's order, without reading any weight (for tests that make one).
    #[cfg(test)]
    pub fn layout_only(config: &Config, prefix: &str) -> Vec<(String, Vec<usize>)> {
        struct Nothing;
        impl Weights for Nothing {
            fn tensor(&self, _: &str) -> Option<crate::model::TensorView<'_>> {
                None
            }
            fn names(&self) -> Vec<&str> {
                Vec::new()
            }
            fn directory(&self) -> Option<&std::path::Path> {
                None
            }
        }
        let mut names = Vec::new();
        let _ = Master::read_with(&Nothing, config, prefix, &mut |t: &Tensor| {
            names.push((t.name.clone(), t.shape.clone()))
        });
        names
    }

    /// Copies every tensor the encoder computes with from `weights` (prefixed `prefix`), converted to f32.
    pub fn read(weights: &dyn Weights, config: &Config, prefix: &str) -> Result<Master> {
        Master::read_with(weights, config, prefix, &mut |_| {})
    }

    fn read_with(
        weights: &dyn Weights,
        config: &Config,
        prefix: &str,
        seen: &mut dyn FnMut(&Tensor),
    ) -> Result<Master> {
        let (h, i) = (config.hidden, config.intermediate);
        let mut layout = Layout { tensors: Vec::new(), len: 0 };
        let name = |rest: &str| format!("{prefix}{rest}");
        let norm = |layout: &mut Layout, at: &str| {
            (
                layout.add(name(&format!("{at}.weight")), &[h], false),
                layout.add(name(&format!("{at}.bias")), &[h], false),
            )
        };
        let embeddings = EmbeddingsAt {
            word: layout.add(name("embeddings.word_embeddings.weight"), &[config.vocab, h], true),
            position: layout.add(name("embeddings.position_embeddings.weight"), &[config.positions, h], true),
            token_type: layout.add(name("embeddings.token_type_embeddings.weight"), &[config.type_vocab, h], true),
            ln: norm(&mut layout, "embeddings.LayerNorm"),
        };
        let mut layers = Vec::with_capacity(config.layers);
        for l in 0..config.layers {
            let at = |rest: &str| name(&format!("encoder.layer.{l}.{rest}"));
            let parts = |kind: &str| ["query", "key", "value"].map(|p| at(&format!("attention.self.{p}.{kind}")));
            layers.push(LayerAt {
                qkv: layout.group(parts("weight"), &[h, h], true),
                qkv_bias: layout.group(parts("bias"), &[h], false),
                out: layout.add(at("attention.output.dense.weight"), &[h, h], true),
                out_bias: layout.add(at("attention.output.dense.bias"), &[h], false),
                ln1: norm(&mut layout, &format!("encoder.layer.{l}.attention.output.LayerNorm")),
                up: layout.add(at("intermediate.dense.weight"), &[i, h], true),
                up_bias: layout.add(at("intermediate.dense.bias"), &[i], false),
                down: layout.add(at("output.dense.weight"), &[h, i], true),
                down_bias: layout.add(at("output.dense.bias"), &[h], false),
                ln2: norm(&mut layout, &format!("encoder.layer.{l}.output.LayerNorm")),
            });
        }
        layout.tensors.iter().for_each(&mut *seen);
        let mut values = vec![0.0f32; layout.len];
        for t in &layout.tensors {
            decode(&view(weights, &t.name, &t.shape)?, &mut values[t.range.clone()])?;
        }
        let len = layout.len;
        Ok(Master {
            tensors: layout.tensors,
            embeddings,
            layers,
            values,
            grads: vec![0.0; len],
            m: vec![0.0; len],
            v: vec![0.0; len],
        })
    }

    /// The encoder's prepared weights for these values: vectors copied, matrices packed for the matrix kernels.
    pub fn params(&self, prefix: &'static str, config: &Config) -> Params {
        let (h, i) = (config.hidden, config.intermediate);
        let v = |r: &Range<usize>| self.values[r.clone()].to_vec();
        let e = &self.embeddings;
        Params {
            prefix,
            position_offset: config.position_offset,
            relative_bias: None,
            head: None,
            final_norm: None,
            word: Table::F32(v(&e.word)),
            position: Table::F32(v(&e.position)),
            token_type: Table::F32(v(&e.token_type)),
            embedding_ln: (v(&e.ln.0), v(&e.ln.1)),
            layers: self
                .layers
                .iter()
                .map(|l| Layer {
                    qkv: Packed::weights(&self.values[l.qkv.clone()], 3 * h, h),
                    qkv_bias: v(&l.qkv_bias),
                    out: Packed::weights(&self.values[l.out.clone()], h, h),
                    out_bias: v(&l.out_bias),
                    ln1: (v(&l.ln1.0), v(&l.ln1.1)),
                    up: Packed::weights(&self.values[l.up.clone()], i, h),
                    up_bias: v(&l.up_bias),
                    down: Packed::weights(&self.values[l.down.clone()], h, i),
                    down_bias: v(&l.down_bias),
                    ln2: (v(&l.ln2.0), v(&l.ln2.1)),
                })
                .collect(),
        }
    }

    /// One AdamW update of every weight from its gradient ([`crate::kernels::math::adamw`]), on the executor's
    /// threads: `constants` are the step's, and the tensors that decay (see [`Tensor`]) multiply their weights by
    /// `decay` first (`1 − lr·wd`), the others by 1.
    pub fn adamw(&mut self, executor: &Executor, kernels: &Kernels, constants: AdamW, decay: f32) -> Result<()> {
        let Master { tensors, values, grads, m, v, .. } = self;
        let shared = [values, grads, m, v].map(|b| Shared(b.as_mut_ptr()));
        for tensor in tensors.iter() {
            let decay = if tensor.decay { decay } else { 1.0 };
            let base = tensor.range.start;
            executor.for_slices(tensor.range.len(), |range| {
                let (start, len) = (base + range.start, range.len());
                // SAFETY: the four buffers have the master's length, which holds `tensor.range`; each slice of the
                // range is this task's alone.
                let [p, g, m, v] = shared.map(|s| unsafe { s.slice(start, len) });
                kernels.adamw(p, g, m, v, AdamW { decay, ..constants });
            })?;
        }
        Ok(())
    }

    /// A tensor's values by range.
    pub fn value(&self, r: &Range<usize>) -> &[f32] {
        &self.values[r.clone()]
    }

    /// Where layer `l`'s tensors begin in the flat buffers. The embeddings come first, then the layers in order,
    /// each one's tensors together, and nothing after the last: layer `l` is `layer_start(l)..layer_start(l + 1)`
    /// (the last runs to the end), which the backward pass relies on to hand each layer's finished gradients over.
    pub fn layer_start(&self, l: usize) -> usize {
        self.layers[l].qkv.start
    }
}
