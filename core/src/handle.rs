//! The life cycle every handle class shares: alive, borrowed by others, freed.
//!
//! A handle is freed once; a second `free` does nothing; any other call on a freed handle is a
//! [`ErrorKind::FreedHandle`](crate::ErrorKind::FreedHandle) error; freeing a handle that others still borrow is an
//! [`ErrorKind::InUse`](crate::ErrorKind::InUse) error. One atomic word holds the whole state, so the check on every
//! call is a single load.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const FREED: usize = 1;
const ONE_BORROW: usize = 2;

#[derive(Debug, Default)]
pub struct Lifecycle {
    /// Bit 0: freed. The rest: the number of live borrows, times two.
    state: AtomicUsize,
}

impl Lifecycle {
    pub fn new() -> Self {
        Lifecycle::default()
    }

    #[inline]
    pub fn is_freed(&self) -> bool {
        self.state.load(Ordering::Acquire) & FREED != 0
    }

    /// Fails with a freed-handle error naming `class` and `method` once the handle is freed.
    #[inline]
    pub fn check(&self, class: &str, method: &str) -> Result<()> {
        if self.is_freed() {
            Err(Error::freed(class, method))
        } else {
            Ok(())
        }
    }

    /// Counts one more borrower; fails when the handle is already freed.
    pub fn borrow(&self, class: &str, method: &str) -> Result<()> {
        let mut current = self.state.load(Ordering::Acquire);
        loop {
            if current & FREED != 0 {
                return Err(Error::freed(class, method));
            }
            match self.state.compare_exchange_weak(current, current + ONE_BORROW, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(()),
                Err(seen) => current = seen,
            }
        }
    }

    /// Returns one borrow taken with [`Lifecycle::borrow`].
    pub fn release(&self) {
        self.state.fetch_sub(ONE_BORROW, Ordering::AcqRel);
    }

    pub fn borrows(&self) -> usize {
        self.state.load(Ordering::Acquire) / ONE_BORROW
    }

    /// Marks the handle freed. `Ok(true)` the first time, `Ok(false)` when it already was, and an in-use error
    /// naming `class` and its borrowers (`borrower`, one; `borrowers`, several) while anything borrows it.
    pub fn begin_free(&self, class: &str, (borrower, borrowers): (&str, &str)) -> Result<bool> {
        let mut current = self.state.load(Ordering::Acquire);
        loop {
            if current & FREED != 0 {
                return Ok(false);
            }
            let borrows = current / ONE_BORROW;
            if borrows > 0 {
                let (whom, pronoun) = if borrows == 1 { (borrower, "it") } else { (borrowers, "them") };
                return Err(Error::in_use(format!(
                    "`free` cannot free this {class} yet: {borrows} {whom} still borrow{} it; free {pronoun} first",
                    if borrows == 1 { "s" } else { "" }
                )));
            }
            match self.state.compare_exchange_weak(current, current | FREED, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(true),
                Err(seen) => current = seen,
            }
        }
    }
}

/// A borrow that is returned when dropped.
#[derive(Debug)]
pub struct Lease {
    lifecycle: Arc<Lifecycle>,
}

impl Lease {
    pub fn take(lifecycle: &Arc<Lifecycle>, class: &str, method: &str) -> Result<Lease> {
        lifecycle.borrow(class, method)?;
        Ok(Lease { lifecycle: lifecycle.clone() })
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.lifecycle.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn free_is_idempotent_and_blocks_calls() {
        let l = Lifecycle::new();
        assert!(l.check("Executor", "drain").is_ok());
        assert!(l.begin_free("Executor", ("mesh", "meshes")).unwrap());
        assert!(!l.begin_free("Executor", ("mesh", "meshes")).unwrap());
        assert_eq!(l.check("Executor", "drain").unwrap_err().kind(), ErrorKind::FreedHandle);
    }

    #[test]
    fn borrowed_handles_cannot_be_freed() {
        let l = Arc::new(Lifecycle::new());
        let lease = Lease::take(&l, "Mesh", "borrow").unwrap();
        let err = l.begin_free("Mesh", ("trainer", "trainers")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InUse);
        assert_eq!(err.message(), "`free` cannot free this Mesh yet: 1 trainer still borrows it; free it first");
        drop(lease);
        assert!(l.begin_free("Mesh", ("trainer", "trainers")).unwrap());
        assert_eq!(Lease::take(&l, "Mesh", "borrow").unwrap_err().kind(), ErrorKind::FreedHandle);
    }

    /// An executor is borrowed by meshes and models alike; the message names both, in the singular and the plural.
    #[test]
    fn executor_in_use_names_meshes_and_models() {
        let l = Arc::new(Lifecycle::new());
        let who = ("mesh or model", "meshes or models");
        let one = Lease::take(&l, "Executor", "Model.load_ram").unwrap();
        assert_eq!(
            l.begin_free("Executor", who).unwrap_err().message(),
            "`free` cannot free this Executor yet: 1 mesh or model still borrows it; free it first"
        );
        let two = Lease::take(&l, "Executor", "Mesh.bootstrap").unwrap();
        assert_eq!(
            l.begin_free("Executor", who).unwrap_err().message(),
            "`free` cannot free this Executor yet: 2 meshes or models still borrow it; free them first"
        );
        drop((one, two));
        assert!(l.begin_free("Executor", who).unwrap());
    }
}
