//! Where a model keeps what its verbs prepare once from its weights (a text encoder, image-text towers): prepared by
//! the first call at the model's precision, shared by later ones.

use crate::error::Result;
use crate::model::Weights;
use crate::types::Precision;
use std::sync::{Arc, Mutex};

/// What a verb prepares from a model's weights at a precision.
pub trait Prepare: Sized {
    fn prepare(weights: &dyn Weights, precision: Precision) -> Result<Self>;
}

/// A model's prepared `T`, made on first use.
pub struct Slot<T>(Mutex<Option<Arc<T>>>, Precision);

impl<T> std::fmt::Debug for Slot<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Slot").field(&std::any::type_name::<T>()).field(&self.1).finish()
    }
}

impl<T: Prepare> Slot<T> {
    /// An empty slot whose `T` will keep its weights at `precision`.
    pub fn new(precision: Precision) -> Slot<T> {
        Slot(Mutex::new(None), precision)
    }

    /// The precision the weights are kept at.
    pub fn precision(&self) -> Precision {
        self.1
    }

    /// The prepared `T`, preparing it from `weights` on first use (a failure is not kept: the next call tries
    /// again).
    pub fn get_or_prepare(&self, weights: &dyn Weights) -> Result<Arc<T>> {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(prepared) = &*slot {
            return Ok(prepared.clone());
        }
        let prepared = Arc::new(T::prepare(weights, self.1)?);
        *slot = Some(prepared.clone());
        Ok(prepared)
    }

    /// Replaces the prepared `T`: a trainer's new weights. Calls already running keep the one they took.
    pub(crate) fn publish(&self, prepared: Arc<T>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(prepared);
    }

    /// Drops the prepared `T` (when the model frees its weights).
    pub fn clear(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}
