//! CLIP's and SigLIP's configuration (`config.json`) and weights, read by their Hugging Face names and converted
//! once: the layers' matrices and the projections to packed panels at the model's precision (f32 or bf16), the
//! vectors (biases, norms), embedding tables and SigLIP's probe to f32.

use crate::error::{Error, Result};
use crate::kernels::activation::Activation;
use crate::kernels::gemm::Packed;
use crate::model::dtype::read;
use crate::model::Weights;
use crate::types::Precision;
use serde_json::Value;

/// The shape of one tower's transformer, as its `vision_config` or `text_config` gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct TowerConfig {
    pub hidden: usize,
    pub heads: usize,
    pub layers: usize,
    pub intermediate: usize,
    pub eps: f32,
    pub activation: Activation,
}

impl TowerConfig {
    pub fn head_dim(&self) -> usize {
        self.hidden / self.heads
    }

    /// The wider of a layer's fused QKV rows and its MLP's hidden rows.
    pub fn wide(&self) -> usize {
        (3 * self.hidden).max(self.intermediate)
    }

    /// `json`'s fields, transformers' defaults (`defaults`: hidden, heads, layers, intermediate, eps, activation)
    /// where it has none.
    fn read(json: &Value, what: &str, defaults: (usize, usize, usize, usize, f32, &str)) -> Result<TowerConfig> {
        let (hidden, heads, layers, intermediate, eps, activation) = defaults;
        let hidden = size(json, "hidden_size", hidden);
        let heads = size(json, "num_attention_heads", heads);
        let act = json.get("hidden_act").and_then(Value::as_str).unwrap_or(activation);
        let config = TowerConfig {
            hidden,
            heads,
            layers: size(json, "num_hidden_layers", layers),
            intermediate: size(json, "intermediate_size", intermediate),
            eps: json.get("layer_norm_eps").and_then(Value::as_f64).map_or(eps, |e| e as f32),
            activation: Activation::named(act).ok_or_else(|| {
                Error::unsupported(format!("the {what} tower's `hidden_act` is {act:?}: supported are gelu, gelu_pytorch_tanh, gelu_new and quick_gelu"))
            })?,
        };
        if heads == 0 || hidden == 0 || !hidden.is_multiple_of(heads) {
            return Err(Error::unsupported(format!(
                "the {what} tower's hidden size {hidden} is not a multiple of its {heads} heads"
            )));
        }
        Ok(config)
    }
}

fn size(json: &Value, key: &str, default: usize) -> usize {
    json.get(key).and_then(Value::as_u64).map_or(default, |v| v as usize)
}

/// The image tower's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct VisionConfig {
    pub tower: TowerConfig,
    pub image_size: usize,
    pub patch_size: usize,
}

impl VisionConfig {
    /// Patches per image side.
    pub fn side(&self) -> usize {
        self.image_size / self.patch_size
    }
}

/// The text tower's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct TextConfig {
    pub tower: TowerConfig,
    pub vocab: usize,
    pub positions: usize,
    /// CLIP pools the first token with this id (or, for the legacy id 2, the largest id), SigLIP the last position.
    pub eos: u32,
    /// SigLIP pads every text to `positions` tokens with this id.
    pub pad: u32,
}

/// The architecture: what differs between CLIP and SigLIP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Clip,
    Siglip,
}

impl Variant {
    /// `"clip"` or `"siglip"`: the family a model's description names.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Clip => "clip",
            Variant::Siglip => "siglip",
        }
    }
}

/// A model's configuration: its architecture and towers.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub variant: Variant,
    pub vision: Option<VisionConfig>,
    pub text: Option<TextConfig>,
    /// The width of the projected embeddings (CLIP's `projection_dim`; SigLIP's hidden size).
    pub dimensions: usize,
}

impl Config {
    /// Reads `config.json`'s JSON: `model_type` `clip`, `clip_vision_model` or `siglip`; any other is unsupported.
    pub fn from_json(json: &Value) -> Result<Config> {
        let model_type = json.get("model_type").and_then(Value::as_str).unwrap_or("");
        let empty = Value::Object(Default::default());
        let sub = |key: &str| json.get(key).unwrap_or(&empty);
        let (variant, vision_json, text_json) = match model_type {
            "clip" => (Variant::Clip, sub("vision_config"), Some(sub("text_config"))),
            "clip_vision_model" => (Variant::Clip, json, None),
            "siglip" => (Variant::Siglip, sub("vision_config"), Some(sub("text_config"))),
            other => {
                return Err(Error::unsupported(format!(
                    "{} reads CLIP and SigLIP models (config.json's model_type `clip`, `clip_vision_model` or \
                     `siglip`); this one's model_type is {other:?}",
                    super::verb()
                )))
            }
        };
        let vision = match variant {
            Variant::Clip => VisionConfig {
                tower: TowerConfig::read(vision_json, "vision", (768, 12, 12, 3072, 1e-5, "quick_gelu"))?,
                image_size: size(vision_json, "image_size", 224),
                patch_size: size(vision_json, "patch_size", 32),
            },
            Variant::Siglip => VisionConfig {
                tower: TowerConfig::read(vision_json, "vision", (768, 12, 12, 3072, 1e-6, "gelu_pytorch_tanh"))?,
                image_size: size(vision_json, "image_size", 224),
                patch_size: size(vision_json, "patch_size", 16),
            },
        };
        if vision.patch_size == 0 || !vision.image_size.is_multiple_of(vision.patch_size) || vision.image_size == 0 {
            return Err(Error::unsupported(format!(
                "the image side {} is not a whole number of {}-pixel patches",
                vision.image_size, vision.patch_size
            )));
        }
        if size(vision_json, "num_channels", 3) != 3 {
            return Err(Error::unsupported("the image tower reads 3 channels; config.json gives another count"));
        }
        if variant == Variant::Siglip && vision_json.get("vision_use_head").and_then(Value::as_bool) == Some(false) {
            return Err(Error::unsupported("a SigLIP image tower without its attention-pooling head"));
        }
        let text = match text_json {
            None => None,
            Some(t) => {
                let (tower, vocab, positions, eos, pad) = match variant {
                    Variant::Clip => {
                        (TowerConfig::read(t, "text", (512, 8, 12, 2048, 1e-5, "quick_gelu"))?, 49408, 77, 49407, 1)
                    }
                    Variant::Siglip => {
                        (TowerConfig::read(t, "text", (768, 12, 12, 3072, 1e-6, "gelu_pytorch_tanh"))?, 32000, 64, 2, 1)
                    }
                };
                Some(TextConfig {
                    vocab: size(t, "vocab_size", vocab),
                    positions: size(t, "max_position_embeddings", positions),
                    eos: size(t, "eos_token_id", eos) as u32,
                    pad: size(t, "pad_token_id", pad) as u32,
                    tower,
                })
            }
        };
        let dimensions = match variant {
            Variant::Clip => size(if text.is_some() { json } else { vision_json }, "projection_dim", 512),
            Variant::Siglip => vision.tower.hidden,
        };
        if let (Variant::Siglip, Some(t)) = (variant, text_json) {
            let projection = size(t, "projection_size", text.as_ref().map_or(0, |t| t.tower.hidden));
            if projection != dimensions {
                return Err(Error::unsupported(format!(
                    "SigLIP's text head gives {projection} values and its image tower {dimensions}"
                )));
            }
        }
        Ok(Config { variant, vision: Some(vision), text, dimensions })
    }
}

/// A matrix at the model's precision.
fn pack(w: &[f32], n: usize, k: usize, precision: Precision) -> Packed {
    match precision {
        Precision::F32 => Packed::weights(w, n, k),
        Precision::Bf16 => Packed::weights_bf16(w, n, k),
    }
}

/// One pre-norm transformer layer: `x += out(attention(qkv(norm1(x))))`, then `x += down(act(up(norm2(x))))`.
pub struct Layer {
    pub norm1: (Vec<f32>, Vec<f32>),
    pub qkv: Packed,
    pub qkv_bias: Vec<f32>,
    pub out: Packed,
    pub out_bias: Vec<f32>,
    pub norm2: (Vec<f32>, Vec<f32>),
    pub up: Packed,
    pub up_bias: Vec<f32>,
    pub down: Packed,
    pub down_bias: Vec<f32>,
}

fn norm(weights: &dyn Weights, name: &str, h: usize) -> Result<(Vec<f32>, Vec<f32>)> {
    Ok((read(weights, &format!("{name}.weight"), &[h])?, read(weights, &format!("{name}.bias"), &[h])?))
}

/// A linear layer's `[n × k]` weight, packed, and its bias (zeros where `bias` is false).
fn linear(
    weights: &dyn Weights,
    name: &str,
    n: usize,
    k: usize,
    bias: bool,
    p: Precision,
) -> Result<(Packed, Vec<f32>)> {
    let w = read(weights, &format!("{name}.weight"), &[n, k])?;
    let b = if bias { read(weights, &format!("{name}.bias"), &[n])? } else { vec![0.0; n] };
    Ok((pack(&w, n, k, p), b))
}

fn layers(weights: &dyn Weights, prefix: &str, config: &TowerConfig, p: Precision) -> Result<Vec<Layer>> {
    let (h, wide) = (config.hidden, config.intermediate);
    (0..config.layers)
        .map(|l| {
            let name = |part: &str| format!("{prefix}.encoder.layers.{l}.{part}");
            let (mut qkv, mut qkv_bias) = (Vec::with_capacity(3 * h * h), Vec::with_capacity(3 * h));
            for part in ["q_proj", "k_proj", "v_proj"] {
                qkv.extend(read(weights, &name(&format!("self_attn.{part}.weight")), &[h, h])?);
                qkv_bias.extend(read(weights, &name(&format!("self_attn.{part}.bias")), &[h])?);
            }
            let (out, out_bias) = linear(weights, &name("self_attn.out_proj"), h, h, true, p)?;
            let (up, up_bias) = linear(weights, &name("mlp.fc1"), wide, h, true, p)?;
            let (down, down_bias) = linear(weights, &name("mlp.fc2"), h, wide, true, p)?;
            Ok(Layer {
                norm1: norm(weights, &name("layer_norm1"), h)?,
                qkv: pack(&qkv, 3 * h, h, p),
                qkv_bias,
                out,
                out_bias,
                norm2: norm(weights, &name("layer_norm2"), h)?,
                up,
                up_bias,
                down,
                down_bias,
            })
        })
        .collect()
}

/// SigLIP's attention-pooling head: a learnt query attends to every patch (one multi-head attention), then
/// `x += mlp(norm(x))`. The query's projection is computed once here.
pub struct PoolingHead {
    /// `Wq · probe + bq`.
    pub query: Vec<f32>,
    /// The keys' and values' projection, `[2h × h]`, and its bias.
    pub kv: Packed,
    pub kv_bias: Vec<f32>,
    pub out: Packed,
    pub out_bias: Vec<f32>,
    pub norm: (Vec<f32>, Vec<f32>),
    pub up: Packed,
    pub up_bias: Vec<f32>,
    pub down: Packed,
    pub down_bias: Vec<f32>,
}

/// How the image tower turns its tokens into one row.
pub enum Pool {
    /// CLIP: the class token's row after `post_layernorm`, then `visual_projection` (no bias).
    Class { projection: Packed },
    /// SigLIP: `post_layernorm` on every row, then the attention-pooling head.
    Head(Box<PoolingHead>),
}

/// The image tower's weights.
pub struct Vision {
    /// The patch convolution as a `[hidden × 3·p·p]` matrix over a patch's pixels (channel, row, column), and its
    /// bias (zeros for CLIP, which has none).
    pub patch: Packed,
    pub patch_bias: Vec<f32>,
    /// CLIP's class embedding (SigLIP has no class token).
    pub class: Option<Vec<f32>>,
    /// `[tokens × hidden]`.
    pub positions: Vec<f32>,
    /// CLIP's `pre_layrnorm` (so spelt in transformers) before the layers.
    pub pre_norm: Option<(Vec<f32>, Vec<f32>)>,
    pub layers: Vec<Layer>,
    pub post_norm: (Vec<f32>, Vec<f32>),
    pub pool: Pool,
}

impl Vision {
    pub fn read(weights: &dyn Weights, config: &Config, p: Precision) -> Result<Vision> {
        let vision = config.vision.as_ref().expect("every model here has an image tower");
        let (h, patch) = (vision.tower.hidden, vision.patch_size);
        let pixels = 3 * patch * patch;
        let clip = config.variant == Variant::Clip;
        let tokens = vision.side() * vision.side() + usize::from(clip);
        let e = "vision_model.embeddings";
        let conv = read(weights, &format!("{e}.patch_embedding.weight"), &[h, 3, patch, patch])?;
        let patch_bias = if clip { vec![0.0; h] } else { read(weights, &format!("{e}.patch_embedding.bias"), &[h])? };
        let pool = match config.variant {
            Variant::Clip => {
                Pool::Class { projection: linear(weights, "visual_projection", config.dimensions, h, false, p)?.0 }
            }
            Variant::Siglip => {
                let head = "vision_model.head";
                let in_proj = read(weights, &format!("{head}.attention.in_proj_weight"), &[3 * h, h])?;
                let in_bias = read(weights, &format!("{head}.attention.in_proj_bias"), &[3 * h])?;
                let probe = read(weights, &format!("{head}.probe"), &[1, 1, h])?;
                let query = (0..h)
                    .map(|j| {
                        let row = &in_proj[j * h..(j + 1) * h];
                        (row.iter().zip(&probe).map(|(w, x)| *w as f64 * *x as f64).sum::<f64>() + in_bias[j] as f64)
                            as f32
                    })
                    .collect();
                let (out, out_bias) = linear(weights, &format!("{head}.attention.out_proj"), h, h, true, p)?;
                let wide = vision.tower.intermediate;
                let (up, up_bias) = linear(weights, &format!("{head}.mlp.fc1"), wide, h, true, p)?;
                let (down, down_bias) = linear(weights, &format!("{head}.mlp.fc2"), h, wide, true, p)?;
                Pool::Head(Box::new(PoolingHead {
                    query,
                    kv: pack(&in_proj[h * h..], 2 * h, h, p),
                    kv_bias: in_bias[h..].to_vec(),
                    out,
                    out_bias,
                    norm: norm(weights, &format!("{head}.layernorm"), h)?,
                    up,
                    up_bias,
                    down,
                    down_bias,
                }))
            }
        };
        Ok(Vision {
            patch: pack(&conv, h, pixels, p),
            patch_bias,
            class: if clip { Some(read(weights, &format!("{e}.class_embedding"), &[h])?) } else { None },
            positions: read(weights, &format!("{e}.position_embedding.weight"), &[tokens, h])?,
            pre_norm: if clip { Some(norm(weights, "vision_model.pre_layrnorm", h)?) } else { None },
            layers: layers(weights, "vision_model", &vision.tower, p)?,
            post_norm: norm(weights, "vision_model.post_layernorm", h)?,
            pool,
        })
    }
}

/// The text tower's weights.
pub struct Text {
    /// `[vocab × hidden]` and `[positions × hidden]`.
    pub tokens: Vec<f32>,
    pub positions: Vec<f32>,
    pub layers: Vec<Layer>,
    pub final_norm: (Vec<f32>, Vec<f32>),
    /// CLIP's `text_projection` (zero bias) or SigLIP's `text_model.head`.
    pub projection: Packed,
    pub projection_bias: Vec<f32>,
}

impl Text {
    pub fn read(weights: &dyn Weights, config: &Config, p: Precision) -> Result<Option<Text>> {
        let Some(text) = &config.text else { return Ok(None) };
        let h = text.tower.hidden;
        let e = "text_model.embeddings";
        let (projection, projection_bias) = match config.variant {
            Variant::Clip => linear(weights, "text_projection", config.dimensions, h, false, p)?,
            Variant::Siglip => linear(weights, "text_model.head", config.dimensions, h, true, p)?,
        };
        Ok(Some(Text {
            tokens: read(weights, &format!("{e}.token_embedding.weight"), &[text.vocab, h])?,
            positions: read(weights, &format!("{e}.position_embedding.weight"), &[text.positions, h])?,
            layers: layers(weights, "text_model", &text.tower, p)?,
            final_norm: norm(weights, "text_model.final_layer_norm", h)?,
            projection,
            projection_bias,
        }))
    }
}

/// `logit_scale` and SigLIP's `logit_bias`, where the checkpoint has them.
pub fn logits(weights: &dyn Weights) -> Result<(Option<f32>, Option<f32>)> {
    let scalar = |name: &str| -> Result<Option<f32>> {
        match weights.tensor(name) {
            None => Ok(None),
            Some(view) if view.shape.iter().product::<usize>() == 1 => {
                let mut out = [0.0];
                crate::model::dtype::decode(&view, &mut out)?;
                Ok(Some(out[0]))
            }
            Some(view) => {
                Err(Error::unsupported(format!("tensor `{name}` has shape {:?}; one value was expected", view.shape)))
            }
        }
    };
    Ok((scalar("logit_scale")?, scalar("logit_bias")?))
}
