//! Deferred calls: a bounded queue of closures that workers run when they have no fork-join work.

use super::pool::Engine;
use crate::error::{Error, Result};
use std::collections::{BTreeSet, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{
    AtomicU32,
    Ordering::{Relaxed, SeqCst},
};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Bits of the quiet word: nothing in flight and no panic to report; the idle mood is `Spinning`; freed; streams.
pub(crate) const QUIET_SETTLED: u32 = 1;
pub(crate) const QUIET_SPINNING: u32 = 2;
pub(crate) const QUIET_FREED: u32 = 4;
/// Set for good on an executor with streams: its `drain` always synchronises them, so the word never reads quiet.
pub(crate) const QUIET_STREAMS: u32 = 8;

pub(crate) type Call = Box<dyn FnOnce() + Send + 'static>;

#[derive(Default)]
struct State {
    /// Queued calls, each with its ticket.
    queue: VecDeque<(u64, Call)>,
    /// Deferred calls queued plus running (what the limit counts).
    in_flight: usize,
    /// Verbs running from a caller's thread on the executor's threads (see [`Deferred::enter`]); not queued, and not
    /// counted against the limit, but a `drain` waits for them as for deferred calls.
    verbs: usize,
    /// The ticket the next call or verb gets: tickets count up from 0 in the order of submission.
    next: u64,
    /// The tickets of every call and verb not yet completed. Calls complete out of order (two workers, or a verb
    /// nested in another's run), so a `drain` waits until none older than itself is left, not for a count.
    open: BTreeSet<u64>,
    panics: u64,
    first_panic: Option<String>,
}

pub(crate) struct Deferred {
    limit: usize,
    /// The quiet word (see [`super::Quiet`]): its `SETTLED` bit mirrors "no call in flight and no panic awaiting its
    /// report" from `state` on every change under its lock, so a `drain` of an idle executor returns without
    /// locking; the executor keeps its mood and freed bits.
    pub(crate) quiet: AtomicU32,
    state: Mutex<State>,
    slot_freed: Condvar,
    completed: Condvar,
}

impl State {
    /// Gives a new call or verb its ticket and counts it open.
    fn open_ticket(&mut self) -> u64 {
        let ticket = self.next;
        self.next += 1;
        self.open.insert(ticket);
        ticket
    }
}

impl Deferred {
    pub fn new(limit: usize) -> Deferred {
        Deferred {
            limit,
            quiet: AtomicU32::new(QUIET_SETTLED),
            state: Mutex::default(),
            slot_freed: Condvar::new(),
            completed: Condvar::new(),
        }
    }

    /// Mirrors what a `drain` would have to wait for or report; call with the lock held, after changing `state`.
    fn settle(&self, state: &State) {
        let settled = state.in_flight == 0 && state.verbs == 0 && state.panics == 0;
        // Only `settle` writes this bit, always under the lock, so reading it first cannot race another writer.
        if (self.quiet.load(Relaxed) & QUIET_SETTLED != 0) != settled {
            if settled {
                self.quiet.fetch_or(QUIET_SETTLED, SeqCst);
            } else {
                self.quiet.fetch_and(!QUIET_SETTLED, SeqCst);
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `call`, waiting while `limit` calls are in flight. With `help` (no worker can run calls), a full
    /// queue runs its oldest call on the submitting thread instead of waiting for one.
    pub fn submit(&self, call: Call, help: bool, engine: &Engine) {
        let queued = &engine.queued.0;
        let mut state = self.lock();
        while state.in_flight >= self.limit {
            if help {
                if let Some(oldest) = state.queue.pop_front() {
                    queued.fetch_sub(1, SeqCst);
                    drop(state);
                    engine.inline(|| self.run(oldest));
                    state = self.lock();
                    continue;
                }
            }
            state = self.slot_freed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        let ticket = state.open_ticket();
        state.queue.push_back((ticket, call));
        state.in_flight += 1;
        self.settle(&state);
        queued.fetch_add(1, SeqCst);
    }

    /// Takes the oldest queued call (with its ticket), if any.
    pub fn take(&self, engine: &Engine) -> Option<(u64, Call)> {
        let queued = &engine.queued.0;
        let mut state = self.lock();
        let call = state.queue.pop_front();
        if call.is_some() {
            queued.fetch_sub(1, SeqCst);
        }
        call
    }

    /// Runs a taken call and counts it completed, recording a panic instead of unwinding.
    pub fn run(&self, (ticket, call): (u64, Call)) {
        let outcome = catch_unwind(AssertUnwindSafe(call));
        let mut state = self.lock();
        if let Err(payload) = outcome {
            state.panics += 1;
            if state.first_panic.is_none() {
                state.first_panic = Some(Error::from_panic(payload).message().to_string());
            }
        }
        state.in_flight -= 1;
        state.open.remove(&ticket);
        self.settle(&state);
        drop(state);
        self.slot_freed.notify_one();
        self.completed.notify_all();
    }

    /// Counts a verb (an `encodeText`) as in flight until [`Deferred::leave`] with the returned ticket, so that a
    /// `drain` made meanwhile waits for it.
    pub fn enter(&self) -> u64 {
        let mut state = self.lock();
        state.verbs += 1;
        let ticket = state.open_ticket();
        self.settle(&state);
        ticket
    }

    /// Ends the verb that [`Deferred::enter`] gave `ticket`.
    pub fn leave(&self, ticket: u64) {
        let mut state = self.lock();
        state.verbs -= 1;
        state.open.remove(&ticket);
        self.settle(&state);
        drop(state);
        self.completed.notify_all();
    }

    /// Waits until every call submitted so far has completed, running queued calls on this thread meanwhile.
    /// Then reports (and forgets) the panics recorded since the last report.
    #[inline]
    pub fn drain(&self, engine: &Engine) -> Result<()> {
        if self.is_settled() {
            return Ok(()); // nothing in flight, nothing to report: everything submitted before this call is done
        }
        self.drain_busy(engine)
    }

    /// Whether nothing (deferred call or verb) is in flight and no panic awaits its report, so a `drain` now would return at once.
    #[inline]
    pub fn is_settled(&self) -> bool {
        self.quiet.load(SeqCst) & QUIET_SETTLED != 0
    }

    /// The part of [`Deferred::drain`] that waits: out of line, so the idle check inlines into its callers.
    #[cold]
    #[inline(never)]
    fn drain_busy(&self, engine: &Engine) -> Result<()> {
        let queued = &engine.queued.0;
        let mut state = self.lock();
        // Everything with a ticket below `target` was submitted before this drain; later ones it need not wait for.
        let target = state.next;
        while state.open.first().is_some_and(|&oldest| oldest < target) {
            if let Some(call) = state.queue.pop_front() {
                queued.fetch_sub(1, SeqCst);
                drop(state);
                // Marked as one of the engine's threads, so a `free` or `drain` inside the call fails fast.
                engine.inline(|| self.run(call));
                state = self.lock();
            } else {
                state = self.completed.wait(state).unwrap_or_else(|p| p.into_inner());
            }
        }
        if state.panics == 0 {
            return Ok(());
        }
        let (count, first) = (state.panics, state.first_panic.take().unwrap_or_default());
        state.panics = 0;
        self.settle(&state);
        Err(Error::internal(format!(
            "{count} deferred call{} panicked since the last `drain`; the first: {first}",
            if count == 1 { "" } else { "s" }
        )))
    }
}
