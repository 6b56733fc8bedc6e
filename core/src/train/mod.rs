//! Training: [`Trainer`] fine-tunes a RAM model's encoder on its executor's threads (the verb behind
//! `Trainer.contrastive`, `step`, `save`).
//!
//! A trainer borrows its model from [`Trainer::contrastive`] until [`Trainer::free`] (so `Model::free` meanwhile is
//! in use). It copies the encoder's weights into fp32 master weights of its own, with AdamW's two moments beside
//! them; every step runs the forward pass keeping what the backward pass reads, the loss, the backward pass, clips
//! the gradients and updates the weights, then publishes a freshly packed encoder to the model, so the model's next
//! `encode_text` embeds with the new weights. An encode that overlaps a step keeps the encoder it started with.

use crate::error::{Error, Result};
use crate::handle::Lifecycle;
use crate::model::{Model, ModelLoan};
use crate::types::{TrainStep, TrainerContrastiveConfig};
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

struct State {
    loan: ModelLoan,
    config: TrainerContrastiveConfig,
    steps: u64,
}

/// A step in flight on a trainer, from [`Trainer::begin_call`] until dropped: a `free` meanwhile is in use.
#[must_use = "the call counts as in flight only while this lives"]
pub struct TrainerCall {
    trainer: Trainer,
}

impl Drop for TrainerCall {
    fn drop(&mut self) {
        self.trainer.inner.lifecycle.release();
    }
}

impl Trainer {
    /// Makes a trainer for `model`'s encoder with the in-batch-negatives contrastive loss.
    pub fn contrastive(model: &Model, config: TrainerContrastiveConfig) -> Result<Trainer> {
        let lease = model.lend("Trainer.contrastive")?;
        Ok(Trainer {
            inner: Arc::new(Inner {
                lifecycle: Lifecycle::new(),
                state: Mutex::new(Some(State { loan: lease, config, steps: 0 })),
            }),
        })
    }

    /// Runs one optimisation step on `anchors` and their `positives`.
    pub fn step(&self, anchors: &[String], positives: &[String]) -> Result<TrainStep> {
        let _call = self.begin_call("step")?;
        let mut state = self.inner.state.lock().unwrap_or_else(|p| p.into_inner());
        let state = state.as_mut().ok_or_else(|| Error::freed("Trainer", "step"))?;
        let _ = (anchors, positives, state.loan.model(), &state.config);
        state.steps += 1;
        Err(Error::unsupported("`step` is not implemented yet"))
    }

    /// Writes the trained model as a sentence-transformers folder at `directory`.
    pub fn save(&self, directory: impl AsRef<str>) -> Result<()> {
        let _call = self.begin_call("save")?;
        let _ = directory.as_ref();
        Err(Error::unsupported("`save` is not implemented yet"))
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

    /// Drops the master weights and returns the model's borrow; a second call does nothing.
    pub fn free(&self) -> Result<()> {
        let begun = self.inner.lifecycle.begin_free("Trainer", ("step", "steps")).map_err(|_| {
            Error::in_use(format!(
                "`free` cannot free this Trainer yet: a {} is in flight on it; wait for it to finish first",
                crate::path::name("step")
            ))
        })?;
        if begun {
            drop(self.inner.state.lock().unwrap_or_else(|p| p.into_inner()).take());
        }
        Ok(())
    }
}
