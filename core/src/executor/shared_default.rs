//! The default executor: what a RAM model loads on when its load names no executor. One RAM executor with every
//! default, made by the first such load and shared by every model that names none. Only models hold it (no caller
//! has its handle to free), so it is freed, like any executor, when the last clone drops: with the last of those
//! models. The next load that names none then makes a new one. A process forked from one that held it makes its
//! own: the parent's worker threads do not exist in the child.

use super::{Executor, Inner};
use crate::error::Result;
use crate::ExecutorForRamConfig;
use std::sync::{Mutex, Weak};

/// The current default executor, while a model holds it, and the fork count of the process that made it.
static DEFAULT: Mutex<(u64, Weak<Inner>)> = Mutex::new((0, Weak::new()));

impl Executor {
    /// The default executor, made with [`ExecutorForRamConfig::default`] when no model holds one.
    pub fn shared_default() -> Result<Executor> {
        let mut current = DEFAULT.lock().unwrap_or_else(|p| p.into_inner());
        let process = super::forked::generation();
        if current.0 == process {
            if let Some(inner) = current.1.upgrade() {
                return Ok(Executor { inner });
            }
        }
        let executor = Executor::for_ram(ExecutorForRamConfig::default())?;
        *current = (process, std::sync::Arc::downgrade(&executor.inner));
        Ok(executor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn one_default_while_it_is_held_then_a_new_one() {
        let first = Executor::shared_default().unwrap();
        let second = Executor::shared_default().unwrap();
        assert!(Arc::ptr_eq(&first.inner, &second.inner), "shared while held");
        let weak = Arc::downgrade(&first.inner);
        drop((first, second));
        assert!(weak.upgrade().is_none(), "freed with its last holder");
        let third = Executor::shared_default().unwrap();
        assert!(!third.is_freed());
        assert_eq!(third.threads(), Executor::for_ram(ExecutorForRamConfig::default()).unwrap().threads());
    }
}
