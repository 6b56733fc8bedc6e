//! The fork-join verbs of a RAM executor (see "Dispatch" in the module's documentation): the static split
//! ([`Executor::for_n`], [`Executor::for_slices`]), the shared counter ([`Executor::for_n_dynamic`]) and one call per
//! thread ([`Executor::for_threads`]), each catching a task's panic as the verb's internal error.

use super::pool::Padded;
use super::Executor;
use crate::error::{Error, Result};
use std::cell::Cell;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Collects the first panic of a dispatch.
#[derive(Default)]
struct PanicSlot(Mutex<Option<Error>>);

impl PanicSlot {
    #[inline]
    fn guard(&self, f: impl FnOnce()) {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
            let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none() {
                *slot = Some(Error::from_panic(payload));
            }
        }
    }
    fn into_result(self) -> Result<()> {
        match self.0.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The bounds of static slice `slice` of `0..n` split `parts` ways (the first `n % parts` slices are one longer).
#[inline]
fn slice_bounds(n: usize, parts: usize, slice: usize) -> Range<usize> {
    let (base, extra) = (n / parts, n % parts);
    let start = slice * base + slice.min(extra);
    start..start + base + usize::from(slice < extra)
}

impl Executor {
    /// Takes the dispatch lock, or says the dispatch must run inline (no workers, or a nested call).
    fn begin(&self, method: &str) -> Result<Option<MutexGuard<'_, ()>>> {
        // Before the lock: a fork may have copied it held by a thread that does not exist in this process.
        self.check_process()?;
        let engine = &self.inner.shared.engine;
        if self.inner.threads == 1 || engine.is_own_thread() {
            self.check(method)?;
            return Ok(None);
        }
        let guard = engine.dispatch.lock().unwrap_or_else(|p| p.into_inner());
        self.check(method)?;
        Ok(Some(guard))
    }

    fn inline(&self, f: impl FnOnce()) -> Result<()> {
        let slot = PanicSlot::default();
        self.inner.shared.engine.inline(|| slot.guard(f));
        slot.into_result()
    }

    /// Calls `f(i)` for every `i` in `0..n`, each thread taking one contiguous slice (static split).
    pub fn for_n(&self, n: usize, f: impl Fn(usize) + Sync) -> Result<()> {
        self.for_slices_named("for_n", n, true, |range, tick| {
            for i in range {
                f(i);
                tick();
            }
        })
    }

    /// Calls `f(range)` once per non-empty static slice of `0..n`, at most one slice per thread.
    pub fn for_slices(&self, n: usize, f: impl Fn(Range<usize>) + Sync) -> Result<()> {
        self.for_slices_named("for_slices", n, false, |range, _tick| f(range))
    }

    /// The static split behind `for_n` and `for_slices`. `f(range, tick)` calls `tick()` after each task when
    /// `lazy`, so a dispatch to parked workers can finish tiny work on the caller without waking them.
    fn for_slices_named(
        &self,
        method: &str,
        n: usize,
        lazy: bool,
        f: impl Fn(Range<usize>, &dyn Fn()) + Sync,
    ) -> Result<()> {
        let Some(_guard) = self.begin(method)? else {
            return self.inline(|| {
                let parts = self.inner.threads.min(n.max(1));
                (0..parts).map(|s| slice_bounds(n, parts, s)).filter(|r| !r.is_empty()).for_each(|r| f(r, &|| {}))
            });
        };
        if n == 0 {
            return Ok(());
        }
        let engine = &self.inner.shared.engine;
        let threads = engine.threads;
        let generation = engine.next_generation();
        let slot = PanicSlot::default();
        let job = |thread: usize| {
            let done = Cell::new(0usize);
            let tick = || {
                done.set(done.get() + 1);
                engine.after_task(thread, done.get());
            };
            for k in 0..threads {
                let slice = (thread + k) % threads;
                if k == 1 {
                    engine.close_if_alone(thread);
                }
                if k > 0 {
                    engine.before_stealing(thread, slice, generation);
                }
                let range = slice_bounds(n, threads, slice);
                if !range.is_empty() && engine.claim(slice, generation) {
                    slot.guard(|| f(range, &tick));
                }
            }
        };
        engine.broadcast(&job, false, lazy.then_some(n));
        slot.into_result()
    }

    /// Calls `f(i)` for every `i` in `0..n`, threads claiming one index at a time from a shared counter.
    pub fn for_n_dynamic(&self, n: usize, f: impl Fn(usize) + Sync) -> Result<()> {
        let Some(_guard) = self.begin("for_n_dynamic")? else {
            return self.inline(|| (0..n).for_each(&f));
        };
        if n == 0 {
            return Ok(());
        }
        let next = Padded(AtomicUsize::new(0));
        let slot = PanicSlot::default();
        let engine = &self.inner.shared.engine;
        let job = |thread: usize| {
            let mut done = 0usize;
            loop {
                let i = next.0.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                slot.guard(|| f(i));
                done += 1;
                engine.after_task(thread, done);
            }
        };
        engine.broadcast(&job, false, Some(n));
        slot.into_result()
    }

    /// Calls `f(thread_index)` once for every thread index, each on its own thread (index 0 on the caller).
    /// Nested inside a task of this executor, it calls every index inline on the calling thread instead.
    pub fn for_threads(&self, f: impl Fn(usize) + Sync) -> Result<()> {
        let Some(_guard) = self.begin("for_threads")? else {
            return self.inline(|| (0..self.inner.threads).for_each(&f));
        };
        let slot = PanicSlot::default();
        let job = |thread: usize| slot.guard(|| f(thread));
        self.inner.shared.engine.broadcast(&job, true, None);
        slot.into_result()
    }
}
