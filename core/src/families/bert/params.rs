//! The BERT weights, read through [`Weights`] and converted once: the layers' matrices to packed panels (query,
//! key and value fused into one) and the embedding tables, both at the model's precision (f32 or bf16), and the
//! vectors (biases, norms) to f32. The encoder then owns every value it
//! reads per call, so nothing it computes with can change under it, and a trainer can publish new values.

use super::{Config, Pooling, Variant};
use crate::error::{Error, Result};
use crate::kernels::bf16;
use crate::kernels::gemm::Packed;
use crate::model::dtype::read;
use crate::model::Weights;
use crate::types::Precision;

/// One encoder layer.
pub struct Layer {
    pub qkv: Packed,
    pub qkv_bias: Vec<f32>,
    pub out: Packed,
    pub out_bias: Vec<f32>,
    pub ln1: (Vec<f32>, Vec<f32>),
    pub up: Packed,
    pub up_bias: Vec<f32>,
    pub down: Packed,
    pub down_bias: Vec<f32>,
    pub ln2: (Vec<f32>, Vec<f32>),
}

/// Every prepared weight, the embedding tables included, in memory the encoder owns.
pub struct Params {
    /// `""`, `"bert."`, `"distilbert."` or `"roberta."`: the prefix the checkpoint's tensor names carry.
    pub prefix: &'static str,
    /// The position table's row of a text's first token ([`Config::position_offset`]).
    pub position_offset: usize,
    /// `[vocab × hidden]`, `[positions × hidden]` and `[type_vocab × hidden]`.
    pub word: Table,
    pub position: Table,
    pub token_type: Table,
    pub embedding_ln: (Vec<f32>, Vec<f32>),
    pub layers: Vec<Layer>,
    /// MPNet's relative position bias, `[buckets × heads]`, shared by every layer.
    pub relative_bias: Option<Vec<f32>>,
    /// A cross-encoder's classification head.
    pub head: Option<Head>,
    /// ModernBERT's norm after the last layer.
    pub final_norm: Option<(Vec<f32>, Vec<f32>)>,
}

/// A sequence-classification head with one label, on the pooled vector `x`: `out · tanh(dense · x + b) + c` (BERT's
/// pooler and classifier; RoBERTa's `classifier.dense` and `classifier.out_proj`), or with `norm`,
/// `out · LayerNorm(gelu(dense · x + b)) + c` (ModernBERT's `head` and `classifier`).
pub struct Head {
    pub dense: Vec<f32>,
    pub dense_bias: Vec<f32>,
    /// ModernBERT's LayerNorm after the GELU: its weight, bias (zeros without one) and epsilon.
    pub norm: Option<(Vec<f32>, Vec<f32>, f32)>,
    pub out: Vec<f32>,
    pub out_bias: f32,
    /// The vector the head reads: the first token's, or ModernBERT's `classifier_pooling: "mean"`.
    pub pooling: Pooling,
}

impl Head {
    /// The logit of one pooled vector, summed in f64.
    pub fn logit(&self, x: &[f32]) -> f32 {
        let h = x.len();
        let pre = self
            .dense
            .chunks_exact(h)
            .zip(&self.dense_bias)
            .map(|(row, b)| row.iter().zip(x).map(|(w, v)| *w as f64 * *v as f64).sum::<f64>() + *b as f64);
        let hidden: Vec<f64> = match &self.norm {
            None => pre.map(f64::tanh).collect(),
            Some((gamma, beta, eps)) => {
                let mut act: Vec<f32> = pre.map(|p| p as f32).collect();
                crate::kernels::Kernels::portable().gelu(&mut act);
                let act: Vec<f64> = act.into_iter().map(f64::from).collect();
                let mean = act.iter().sum::<f64>() / h as f64;
                let var = act.iter().map(|a| (a - mean) * (a - mean)).sum::<f64>() / h as f64;
                let inv = 1.0 / (var + *eps as f64).sqrt();
                act.iter()
                    .zip(gamma.iter().zip(beta))
                    .map(|(a, (g, b))| (a - mean) * inv * *g as f64 + *b as f64)
                    .collect()
            }
        };
        let logit = self.out.iter().zip(&hidden).map(|(o, v)| *o as f64 * v).sum::<f64>() + self.out_bias as f64;
        logit as f32
    }

    fn read(weights: &dyn Weights, config: &Config, prefix: &str) -> Result<Option<Head>> {
        if config.classifier.is_none() {
            return Ok(None);
        }
        let h = config.hidden;
        let (dense, out) = match config.variant {
            Variant::Roberta => ("classifier.dense".to_string(), "classifier.out_proj"),
            Variant::ModernBert => ("head.dense".to_string(), "classifier"),
            _ => (format!("{prefix}pooler.dense"), "classifier"),
        };
        let labels = weights.tensor(&format!("{out}.weight")).map_or(0, |t| t.shape.first().copied().unwrap_or(0));
        if labels != 1 {
            return Err(Error::unsupported(format!(
                "{} scores with one label; `{out}.weight` gives {labels}",
                crate::path::name("Model.rerank")
            )));
        }
        let modern = config.modern.as_ref();
        let dense_bias = match modern {
            Some(m) if !m.classifier_bias => vec![0.0; h],
            _ => read(weights, &format!("{dense}.bias"), &[h])?,
        };
        let norm = match modern {
            Some(_) => Some((read(weights, "head.norm.weight", &[h])?, vec![0.0; h], config.layer_norm_eps)),
            None => None,
        };
        Ok(Some(Head {
            dense: read(weights, &format!("{dense}.weight"), &[h, h])?,
            dense_bias,
            norm,
            out: read(weights, &format!("{out}.weight"), &[1, h])?,
            out_bias: read(weights, &format!("{out}.bias"), &[1])?[0],
            pooling: modern.map_or(Pooling::Cls, |m| m.classifier_pooling),
        }))
    }
}

/// An embedding table, rows of `hidden` values, at the model's precision.
pub enum Table {
    F32(Vec<f32>),
    Bf16(Vec<u16>),
    /// A table the family does not have (DistilBERT's token types, ModernBERT's positions): every row zero.
    Zero,
}

impl Table {
    fn new(values: Vec<f32>, precision: Precision) -> Table {
        match precision {
            Precision::F32 => Table::F32(values),
            Precision::Bf16 => Table::Bf16(values.iter().map(|v| bf16::to_bf16(*v)).collect()),
        }
    }

    /// `out = row r` (`add`: `out += row r`), in f32.
    #[inline]
    fn row_into(&self, r: usize, out: &mut [f32], add: bool) {
        let h = out.len();
        match self {
            Table::Zero if add => {}
            Table::Zero => out.fill(0.0),
            Table::F32(v) => {
                let row = &v[r * h..(r + 1) * h];
                if add {
                    out.iter_mut().zip(row).for_each(|(o, x)| *o += *x);
                } else {
                    out.copy_from_slice(row);
                }
            }
            Table::Bf16(v) => {
                let row = &v[r * h..(r + 1) * h];
                if add {
                    out.iter_mut().zip(row).for_each(|(o, x)| *o += bf16::to_f32(*x));
                } else {
                    out.iter_mut().zip(row).for_each(|(o, x)| *o = bf16::to_f32(*x));
                }
            }
        }
    }
}

impl Params {
    pub fn read(weights: &dyn Weights, config: &Config, precision: Precision) -> Result<Params> {
        if config.variant == Variant::ModernBert {
            return Params::read_modern(weights, config, precision);
        }
        let names = Names::of(config.variant);
        let prefix = if weights.tensor("embeddings.word_embeddings.weight").is_some() { "" } else { names.prefix };
        let h = config.hidden;
        let i = config.intermediate;
        let vector = |name: String, len: usize| read(weights, &format!("{prefix}{name}"), &[len]);
        let matrix = |name: String, n: usize, k: usize| read(weights, &format!("{prefix}{name}"), &[n, k]);
        let norm = |name: String| -> Result<(Vec<f32>, Vec<f32>)> {
            Ok((vector(format!("{name}.weight"), h)?, vector(format!("{name}.bias"), h)?))
        };
        let table =
            |name: &str, rows: usize| Ok(Table::new(matrix(format!("embeddings.{name}.weight"), rows, h)?, precision));
        let word = table("word_embeddings", config.vocab)?;
        let position = table("position_embeddings", config.positions + config.position_offset)?;
        let token_type = match config.variant {
            Variant::Bert | Variant::Roberta => table("token_type_embeddings", config.type_vocab)?,
            Variant::DistilBert | Variant::MpNet | Variant::ModernBert => Table::Zero,
        };
        let relative_bias = match config.relative_buckets {
            Some(buckets) => Some(matrix("encoder.relative_attention_bias.weight".into(), buckets, config.heads)?),
            None => None,
        };
        let pack = |w: &[f32], n: usize, k: usize| match precision {
            Precision::F32 => Packed::weights(w, n, k),
            Precision::Bf16 => Packed::weights_bf16(w, n, k),
        };
        let mut layers = Vec::with_capacity(config.layers);
        for l in 0..config.layers {
            let at = |rest: &str| format!("{}.{l}.{rest}", names.layer);
            let mut qkv = Vec::with_capacity(3 * h * h);
            let mut qkv_bias = Vec::with_capacity(3 * h);
            for part in names.qkv {
                qkv.extend(matrix(at(&format!("{part}.weight")), h, h)?);
                qkv_bias.extend(vector(at(&format!("{part}.bias")), h)?);
            }
            layers.push(Layer {
                qkv: pack(&qkv, 3 * h, h),
                qkv_bias,
                out: pack(&matrix(at(&format!("{}.weight", names.out)), h, h)?, h, h),
                out_bias: vector(at(&format!("{}.bias", names.out)), h)?,
                ln1: norm(at(names.ln1))?,
                up: pack(&matrix(at(&format!("{}.weight", names.up)), i, h)?, i, h),
                up_bias: vector(at(&format!("{}.bias", names.up)), i)?,
                down: pack(&matrix(at(&format!("{}.weight", names.down)), h, i)?, h, i),
                down_bias: vector(at(&format!("{}.bias", names.down)), h)?,
                ln2: norm(at(names.ln2))?,
            });
        }
        let embedding_ln = norm("embeddings.LayerNorm".into())?;
        let position_offset = config.position_offset;
        let head = Head::read(weights, config, prefix)?;
        let final_norm = None;
        Ok(Params {
            prefix,
            position_offset,
            word,
            position,
            token_type,
            embedding_ln,
            layers,
            relative_bias,
            head,
            final_norm,
        })
    }

    /// ModernBERT's weights in the same [`Layer`]s: `Wqkv`, `attn.Wo`, `mlp.Wi` (input and gate, `2·I` rows) and
    /// `mlp.Wo` as the four projections with zero biases, `attn_norm` (none in layer 0: left empty) and `mlp_norm`
    /// as the two norms with zero shifts, `final_norm` after the last layer; no position or token type tables.
    fn read_modern(weights: &dyn Weights, config: &Config, precision: Precision) -> Result<Params> {
        let prefix = if weights.tensor("embeddings.tok_embeddings.weight").is_some() { "" } else { "model." };
        let (h, i) = (config.hidden, config.intermediate);
        let matrix = |name: String, n: usize, k: usize| read(weights, &format!("{prefix}{name}"), &[n, k]);
        let norm = |name: &str| -> Result<(Vec<f32>, Vec<f32>)> {
            Ok((read(weights, &format!("{prefix}{name}.weight"), &[h])?, vec![0.0; h]))
        };
        let pack = |w: &[f32], n: usize, k: usize| match precision {
            Precision::F32 => Packed::weights(w, n, k),
            Precision::Bf16 => Packed::weights_bf16(w, n, k),
        };
        let mut layers = Vec::with_capacity(config.layers);
        for l in 0..config.layers {
            let at = |rest: &str| format!("layers.{l}.{rest}");
            layers.push(Layer {
                qkv: pack(&matrix(at("attn.Wqkv.weight"), 3 * h, h)?, 3 * h, h),
                qkv_bias: vec![0.0; 3 * h],
                out: pack(&matrix(at("attn.Wo.weight"), h, h)?, h, h),
                out_bias: vec![0.0; h],
                ln1: if l == 0 { (Vec::new(), Vec::new()) } else { norm(&at("attn_norm"))? },
                up: pack(&matrix(at("mlp.Wi.weight"), i, h)?, i, h),
                up_bias: vec![0.0; i],
                down: pack(&matrix(at("mlp.Wo.weight"), h, i / 2)?, h, i / 2),
                down_bias: vec![0.0; h],
                ln2: norm(&at("mlp_norm"))?,
            });
        }
        let word = Table::new(matrix("embeddings.tok_embeddings.weight".into(), config.vocab, h)?, precision);
        Ok(Params {
            prefix: if prefix.is_empty() { "" } else { "model." },
            position_offset: 0,
            word,
            position: Table::Zero,
            token_type: Table::Zero,
            embedding_ln: norm("embeddings.norm")?,
            layers,
            relative_bias: None,
            head: Head::read(weights, config, prefix)?,
            final_norm: Some(norm("final_norm")?),
        })
    }
}

/// Where a family keeps each part of a layer: `{layer}.{l}.{part}.weight` (and `.bias`), under the prefix a
/// checkpoint with a head carries (`bert.`, `distilbert.`). The embeddings are `embeddings.*` in both.
struct Names {
    prefix: &'static str,
    layer: &'static str,
    qkv: [&'static str; 3],
    out: &'static str,
    ln1: &'static str,
    up: &'static str,
    down: &'static str,
    ln2: &'static str,
}

impl Names {
    fn of(variant: Variant) -> Names {
        // (prefix, layers, query key value, output, its norm, up, down, its norm)
        let (prefix, layer, qkv, out, ln1, up, down, ln2) = match variant {
            Variant::Bert | Variant::Roberta => (
                if variant == Variant::Bert { "bert." } else { "roberta." },
                "encoder.layer",
                ["attention.self.query", "attention.self.key", "attention.self.value"],
                "attention.output.dense",
                "attention.output.LayerNorm",
                "intermediate.dense",
                "output.dense",
                "output.LayerNorm",
            ),
            Variant::MpNet => {
                let qkv = ["attention.attn.q", "attention.attn.k", "attention.attn.v"];
                (
                    "mpnet.",
                    "encoder.layer",
                    qkv,
                    "attention.attn.o",
                    "attention.LayerNorm",
                    "intermediate.dense",
                    "output.dense",
                    "output.LayerNorm",
                )
            }
            Variant::DistilBert | Variant::ModernBert => {
                let qkv = ["attention.q_lin", "attention.k_lin", "attention.v_lin"];
                (
                    "distilbert.",
                    "transformer.layer",
                    qkv,
                    "attention.out_lin",
                    "sa_layer_norm",
                    "ffn.lin1",
                    "ffn.lin2",
                    "output_layer_norm",
                )
            }
        };
        Names { prefix, layer, qkv, out, ln1, up, down, ln2 }
    }
}

impl Params {
    /// Writes token `id`'s embedding at position `position` with token type `token_type` into `row`: the word,
    /// position and type rows added in that order. `position` counts from 0; the table's row is `position_offset`
    /// further (RoBERTa's padding index plus one).
    #[inline]
    pub fn embed(&self, id: usize, position: usize, token_type: usize, row: &mut [f32]) {
        self.word.row_into(id, row, false);
        self.position.row_into(self.position_offset + position, row, true);
        self.token_type.row_into(token_type, row, true);
    }
}
