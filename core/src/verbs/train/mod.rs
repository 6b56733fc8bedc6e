//! Training: [`Trainer`] fine-tunes a RAM model's encoder on its executor's threads (the verb behind
//! `Trainer.contrastive`, `step`, `save`).
//!
//! A trainer borrows its model from [`Trainer::contrastive`] until [`Trainer::free`] (so `Model::free` meanwhile is
//! in use). It copies the encoder's weights into fp32 master weights of its own ([`Master`]), with AdamW's
//! two moments beside them. Every step tokenises the anchors and positives as the encoder does, runs the forward
//! pass keeping what the backward pass reads ([`bert::Tape`]), the loss ([`loss::contrastive`]), the backward
//! pass, clips the gradients' global norm, updates the weights with AdamW as `torch.optim.AdamW` does, then
//! publishes a freshly packed encoder to the model, so the model's next `encode_text` embeds with the new weights
//! (an encode already running keeps the encoder it started with).
//!
//! The defaults and the schedule are sentence-transformers' trainer's (Hugging Face's `Trainer` under it): AdamW
//! with betas (0.9, 0.999) and eps 1e-8, learning rate 5e-5, no weight decay, gradients clipped to norm 1, and
//! the linear schedule: step `k` (from 1) uses `lr · k−1 / warmup` during warm-up, then
//! `lr · (total − (k−1)) / (total − warmup)` (never below 0), or `lr` when no total is given.

mod across;
mod loss;
mod pass;
mod save;

pub use across::CollectiveSeconds;

use super::input::{check_nul, max_tokens};
use crate::collective::Collective;
use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::families::bert::master::Master;
use crate::families::bert::{train as bert, Encoder};
use crate::handle::{Lease, Lifecycle};
use crate::kernels::math::AdamW;
use crate::kernels::ops::Dropout;
use crate::kernels::Kernels;
use crate::mesh::Mesh;
use crate::model::{RamWeights, Weights};
use crate::types::{TrainStep, TrainerContrastiveConfig};
use crate::verbs::encode::EncoderSlot;
use crate::verbs::model::{Model, ModelLoan};
use std::sync::{Arc, Mutex};

/// A trainer for one model. Cloning shares the same trainer.
#[derive(Clone, Debug)]
pub struct Trainer {
    inner: Arc<Inner>,
}

struct Inner {
    lifecycle: Lifecycle,
    /// Present until the trainer is freed or dropped; the lock orders steps and saves.
    state: Mutex<Option<State>>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer").field("freed", &self.lifecycle.is_freed()).finish()
    }
}

/// The configuration, checked, with every default applied.
#[derive(Clone, Copy, Debug)]
struct Settings {
    learning_rate: f64,
    weight_decay: f64,
    warmup_steps: u64,
    total_steps: Option<u64>,
    max_grad_norm: f64,
    scale: f64,
    max_tokens: usize,
    hidden_dropout: f32,
    attention_dropout: f32,
    seed: u64,
}

const BETA1: f64 = 0.9;
const BETA2: f64 = 0.999;
const EPSILON: f64 = 1e-8;

impl Settings {
    fn check(config: &TrainerContrastiveConfig, encoder: &Encoder) -> Result<Settings> {
        let model = encoder.config();
        let non_negative = |name: &str, value: Option<f64>, default: f64| -> Result<f64> {
            match value {
                None => Ok(default),
                Some(v) if v.is_finite() && v >= 0.0 => Ok(v),
                Some(v) => Err(Error::invalid_argument(
                    &format!("config.{name}"),
                    format!("must be a finite number of at least 0, got {v}"),
                )),
            }
        };
        let scale = match config.scale {
            None => 20.0,
            Some(v) if v.is_finite() && v > 0.0 => v,
            Some(v) => {
                return Err(Error::invalid_argument(
                    "config.scale",
                    format!("must be a finite number above 0, got {v}"),
                ))
            }
        };
        let dropout = match config.dropout {
            None => None,
            Some(v) if (0.0..1.0).contains(&v) => Some(v as f32),
            Some(v) => {
                return Err(Error::invalid_argument(
                    "config.dropout",
                    format!("must be at least 0 and below 1, got {v}"),
                ))
            }
        };
        let max_tokens = max_tokens("config.max_tokens", config.max_tokens, model.max_tokens, model.positions)?;
        Ok(Settings {
            learning_rate: non_negative("learning_rate", config.learning_rate, 5e-5)?,
            weight_decay: non_negative("weight_decay", config.weight_decay, 0.0)?,
            warmup_steps: config.warmup_steps.unwrap_or(0) as u64,
            total_steps: config.total_steps.map(u64::from),
            max_grad_norm: non_negative("max_grad_norm", config.max_grad_norm, 1.0)?,
            scale,
            max_tokens,
            hidden_dropout: dropout.unwrap_or(model.hidden_dropout),
            attention_dropout: dropout.unwrap_or(model.attention_dropout),
            seed: config.seed.unwrap_or(0),
        })
    }

    /// The learning rate step `step` (from 1) uses.
    fn learning_rate(&self, step: u64) -> f64 {
        let done = (step - 1) as f64;
        let warmup = self.warmup_steps as f64;
        let factor = if done < warmup {
            done / warmup.max(1.0)
        } else {
            match self.total_steps {
                Some(total) => ((total as f64 - done) / (total as f64 - warmup).max(1.0)).max(0.0),
                None => 1.0,
            }
        };
        self.learning_rate * factor
    }
}

struct State {
    loan: ModelLoan,
    settings: Settings,
    steps: u64,
    executor: Executor,
    weights: Arc<RamWeights>,
    slot: Arc<EncoderSlot>,
    /// The encoder published last, whose packed weights the next forward pass multiplies by.
    encoder: Arc<Encoder>,
    master: Master,
    tape: bert::Tape,
    pooled: Vec<f32>,
    dpooled: Vec<f32>,
    /// The processes this trainer steps with ([`crate::collective::Solo`] alone), and the mesh's borrow.
    collective: Arc<dyn Collective>,
    _mesh: Option<Lease>,
    /// What the last step's collectives cost.
    collective_seconds: CollectiveSeconds,
}

/// A call in flight on a trainer, from [`Trainer::begin_call`] until dropped: a `free` meanwhile is in use.
#[must_use = "the call counts as in flight only while this lives"]
pub struct TrainerCall {
    trainer: Trainer,
}

impl Drop for TrainerCall {
    fn drop(&mut self) {
        self.trainer.inner.lifecycle.release();
    }
}

/// The `i`th text of the batch as its parameter names it (`anchors[3]`, `positives[0]`).
fn text_path(i: usize, pairs: usize) -> String {
    if i < pairs {
        format!("anchors[{i}]")
    } else {
        format!("positives[{}]", i - pairs)
    }
}

impl Trainer {
    /// Makes a trainer for `model`'s encoder with the in-batch-negatives contrastive loss.
    ///
    /// With `config.mesh` it trains data-parallel with every other process of the mesh, as torch's
    /// DistributedDataParallel does: each process steps on its own pairs, the gradients are summed across the mesh
    /// ([`Mesh::collective`]) and divided by its size before clipping and the update, so every process applies the
    /// same update to the same weights. Every process of the mesh must make its trainer together; the trainer
    /// borrows the mesh until it is freed. Only what the loss reaches is reduced and updated: the master weights
    /// hold the tensors the forward pass reads (embeddings, layers), never the pooler, which sentence-transformers'
    /// mean pooling never uses.
    pub fn contrastive(model: &Model, config: TrainerContrastiveConfig) -> Result<Trainer> {
        let mesh = config.mesh.as_ref();
        let (weights, executor, prepared) = model.ram_parts("Trainer.contrastive", "Trainer.contrastive trains")?;
        let crate::verbs::model::Prepared::Text(slot) = prepared else {
            return Err(Error::unsupported(format!(
                "{} trains BERT encoders (`model_type: \"bert\"`) so far; this model is an image-text model",
                crate::path::name("Trainer.contrastive"),
            )));
        };
        if slot.precision() != crate::types::Precision::F32 {
            return Err(Error::unsupported(format!(
                "{} trains f32 weights; this model was loaded with precision {}: load it again with precision f32 to \
                 train it",
                crate::path::name("Trainer.contrastive"),
                slot.precision()
            )));
        }
        let encoder = slot.get_or_prepare(weights.as_ref())?;
        if encoder.config().variant != crate::families::bert::Variant::Bert {
            return Err(Error::unsupported(format!(
                "{} trains BERT encoders (`model_type: \"bert\"`) so far; this model is {:?}",
                crate::path::name("Trainer.contrastive"),
                encoder.config().variant
            )));
        }
        let settings = Settings::check(&config, &encoder)?;
        Kernels::for_class(executor.cpu_class())?;
        let master = Master::read(weights.as_ref(), encoder.config(), encoder.params().prefix)?;
        let mesh_lease = mesh.map(Mesh::borrow).transpose()?;
        let collective: Arc<dyn Collective> = match mesh {
            Some(mesh) => mesh.collective()?,
            None => Arc::new(crate::collective::Solo),
        };
        let loan = model.lend("Trainer.contrastive")?;
        let state = State {
            loan,
            settings,
            steps: 0,
            executor,
            weights,
            slot,
            encoder,
            master,
            tape: bert::Tape::default(),
            pooled: Vec::new(),
            dpooled: Vec::new(),
            collective,
            _mesh: mesh_lease,
            collective_seconds: CollectiveSeconds::default(),
        };
        Ok(Trainer { inner: Arc::new(Inner { lifecycle: Lifecycle::new(), state: Mutex::new(Some(state)) }) })
    }

    /// Runs one optimisation step on `anchors` and their `positives`. A failed step changes no weight.
    pub fn step(&self, anchors: &[String], positives: &[String]) -> Result<TrainStep> {
        let started = std::time::Instant::now();
        let _call = self.begin_call("step")?;
        let pairs = anchors.len();
        let texts: Vec<String> = anchors.iter().chain(positives).cloned().collect();
        let checked = Self::check_batch(anchors, positives, &texts);
        let mut guard = self.inner.state.lock().unwrap_or_else(|p| p.into_inner());
        let state = guard.as_mut().ok_or_else(|| Error::freed("Trainer", "step"))?;
        let _model_call = state.loan.model().begin_call("step")?;
        let executor = state.executor.clone();
        let kernels = Kernels::for_class(executor.cpu_class())?;
        let encoder = state.encoder.clone();
        let config = encoder.config();
        let tokens = checked.and_then(|()| Self::tokens(&executor, &encoder, &texts, pairs, state.settings.max_tokens));
        let agreeing = std::time::Instant::now();
        let tokens = across::agree(state.collective.as_ref(), state.steps + 1, pairs, tokens)?;
        let agreement = agreeing.elapsed().as_secs_f64();
        let step = state.steps + 1;
        let s = state.settings;
        let dropout = (
            Dropout { p: s.hidden_dropout, seed: s.seed, step },
            Dropout { p: s.attention_dropout, seed: s.seed, step },
        );
        let h = config.hidden;
        state.pooled.resize(texts.len() * h, 0.0);
        state.dpooled.resize(texts.len() * h, 0.0);
        let model = bert::TrainWeights { config, params: encoder.params(), master: &state.master };
        pass::forward_pooled(&mut state.tape, (&executor, &kernels), &model, &tokens, dropout, &mut state.pooled)?;
        let loss = loss::contrastive(&state.pooled, pairs, h, s.scale, &mut state.dpooled);
        // The gradients leave the master for the pass (which reads the master's values), averaged across the mesh
        // layer by layer as the pass finishes each.
        let mut grads = std::mem::take(&mut state.master.grads);
        let model = bert::TrainWeights { config, params: encoder.params(), master: &state.master };
        let (tape, dpooled) = (&mut state.tape, &state.dpooled);
        let (backward, all_reduce, waited) = across::backward_averaged(state.collective.as_ref(), |done| {
            pass::backward_pooled(tape, (&executor, &kernels), &model, dropout, dpooled, &mut grads, done)
        });
        state.master.grads = grads;
        backward?;
        let collective_seconds = CollectiveSeconds { agreement, all_reduce, waited };

        // Nothing below fails: the weights change only now.
        let norm = state.master.grads.iter().map(|g| (*g as f64) * (*g as f64)).sum::<f64>().sqrt();
        let clip = if s.max_grad_norm > 0.0 { (s.max_grad_norm / (norm + 1e-6)).min(1.0) } else { 1.0 };
        let learning_rate = s.learning_rate(step);
        adamw(&executor, &kernels, &mut state.master, step, learning_rate, s.weight_decay, clip as f32)?;
        let params = state.master.params(encoder.params().prefix, config);
        let published = Arc::new(encoder.with_params(params));
        state.slot.publish(published.clone());
        state.encoder = published;
        state.steps = step;
        state.collective_seconds = collective_seconds;
        Ok(TrainStep { step, loss, learning_rate, gradient_norm: norm, seconds: started.elapsed().as_secs_f64() })
    }

    /// The checks of a batch that need no model: as many positives as anchors, at least one pair, no NUL.
    fn check_batch(anchors: &[String], positives: &[String], texts: &[String]) -> Result<()> {
        if anchors.len() != positives.len() {
            return Err(Error::invalid_argument(
                "positives",
                format!(
                    "has {} texts but {} has {}; pass one positive per anchor",
                    positives.len(),
                    crate::path::name("anchors"),
                    anchors.len()
                ),
            ));
        }
        if anchors.is_empty() {
            return Err(Error::invalid_argument("anchors", "must hold at least one pair, got an empty list"));
        }
        let pairs = anchors.len();
        check_nul(texts.iter().map(String::as_str), |i| text_path(i, pairs))
    }

    /// Tokenises the batch as the encoder does and checks every text has tokens the model can embed.
    fn tokens(
        executor: &Executor,
        encoder: &Encoder,
        texts: &[String],
        pairs: usize,
        max_tokens: usize,
    ) -> Result<Vec<crate::families::tokenize::Tokens>> {
        let every: Vec<usize> = (0..texts.len()).collect();
        let name = |i: usize| text_path(i, pairs);
        let tokens = encoder.tokenizers().encode_named(executor, texts, &every, max_tokens, &name)?;
        if let Some(i) = tokens.iter().position(|t| t.ids.is_empty()) {
            return Err(Error::invalid_argument(
                &text_path(i, pairs),
                "gives no tokens, so it has no embedding to train",
            ));
        }
        Ok(tokens)
    }

    /// Writes the trained model as a sentence-transformers folder at `directory` (see [`save::folder`]).
    pub fn save(&self, directory: impl AsRef<str>) -> Result<()> {
        let _call = self.begin_call("save")?;
        let guard = self.inner.state.lock().unwrap_or_else(|p| p.into_inner());
        let state = guard.as_ref().ok_or_else(|| Error::freed("Trainer", "save"))?;
        let names: Vec<String> = state.weights.names().into_iter().map(String::from).collect();
        save::folder(directory.as_ref(), state.weights.as_ref(), &names, &state.master)
    }

    /// What the last step's collectives across the mesh cost (all 0 alone): for benchmarks, not in the IDL.
    pub fn collective_seconds(&self) -> CollectiveSeconds {
        let guard = self.inner.state.lock().unwrap_or_else(|p| p.into_inner());
        guard.as_ref().map_or(CollectiveSeconds::default(), |s| s.collective_seconds)
    }

    /// Counts a call of `method` as in flight until the returned guard drops.
    pub fn begin_call(&self, method: &str) -> Result<TrainerCall> {
        self.inner.lifecycle.borrow("Trainer", method)?;
        Ok(TrainerCall { trainer: self.clone() })
    }

    /// Whether `free` has run.
    pub fn is_freed(&self) -> bool {
        self.inner.lifecycle.is_freed()
    }

    /// Drops the master weights and returns the model's borrow (the model keeps the last weights); a second call
    /// does nothing.
    pub fn free(&self) -> Result<()> {
        let begun = self.inner.lifecycle.begin_free("Trainer", ("step", "steps")).map_err(|_| {
            Error::in_use(format!(
                "`free` cannot free this Trainer yet: a {} or {} is in flight on it; wait for it to finish first",
                crate::path::name("step"),
                crate::path::name("save")
            ))
        })?;
        if begun {
            drop(self.inner.state.lock().unwrap_or_else(|p| p.into_inner()).take());
        }
        Ok(())
    }
}

/// One AdamW update of every master weight, as `torch.optim.AdamW` computes it ([`Master::adamw`]), with step
/// `step`'s constants: decay `p ← p·(1 − lr·wd)` for the tensors that decay, then `m ← m + (1−β₁)(g − m)`,
/// `v ← β₂v + (1−β₂)g²`, `p ← p − lr/(1−β₁ᵗ) · m / (√v/√(1−β₂ᵗ) + ε)`, with the gradients first multiplied by `clip`.
fn adamw(
    executor: &Executor,
    kernels: &Kernels,
    master: &mut Master,
    step: u64,
    lr: f64,
    weight_decay: f64,
    clip: f32,
) -> Result<()> {
    let t = step as i32;
    let constants = AdamW {
        clip,
        decay: 1.0,
        beta1: BETA1 as f32,
        beta2: BETA2 as f32,
        eps: EPSILON as f32,
        step_size: (lr / (1.0 - BETA1.powi(t))) as f32,
        bias2_sqrt: (1.0 - BETA2.powi(t)).sqrt() as f32,
    };
    master.adamw(executor, kernels, constants, (1.0 - lr * weight_decay) as f32)
}

#[cfg(test)]
mod tests;
