//! The fork-join engine: a ForkUnion-style broadcast with caller participation, work stealing by the caller, and
//! a futex for parking.
//!
//! # Protocol
//!
//! One 64-bit `state` word holds `generation << 32 | entered << 1 | open`. A dispatch (always under the dispatch
//! lock, one at a time) writes the type-erased closure pointer into `job` while the state is closed and nobody is
//! inside, then opens a new generation. A worker that sees a new open generation enters it with one CAS (counting
//! itself in `entered`), runs `job(thread_index)`, and counts itself out in `exited`. The caller runs
//! `job(0)` itself; the jobs of the static verbs let any thread claim any unclaimed slice, so the caller ends
//! with every slice claimed. It then closes the generation (a worker that comes late sees it closed and never
//! touches `job`) and waits until every worker that entered has exited. Only then does the call return, so the
//! closure can borrow from the caller's stack: the same reasoning ForkUnion's scoped dispatch rests on.
//!
//! # Parking
//!
//! Workers that find nothing to do busy-wait. In the `Spinning` mood they do so forever; in the `Parked` mood
//! they stop after [`PARK_AFTER`] of idleness and sleep on the `bell` futex. Anyone who gives them something to
//! do (a dispatch, a deferred call, a mood change, shutdown) publishes it with a sequentially consistent write and
//! rings the bell only when `sleepers` is non-zero, so a dispatch to spinning workers makes no system call.
//!
//! # Waking late, and only when it pays
//!
//! Waking a parked worker costs the caller a system call (and, on a virtual machine, the trap of the
//! inter-processor interrupt behind it), and the worker runs only some time later: microseconds on bare metal,
//! tens of them on a virtual machine, far more than a tiny task. So a dispatch that finds workers asleep may
//! defer the wake (`lazy`): the caller starts on the work alone and reports each finished task through
//! [`Engine::after_task`], which projects, at the pace so far, how long the caller alone would still take. It
//! rings the bell once that exceeds what a wake costs ([`WakeCost`]: the caller's ring plus the time until a woken
//! worker runs, both learned from this engine's own wakes): ringing at time 0 with `left` of work still to do ends
//! at `arrival + (left - (arrival - ring)) / 2`, sooner than `left` exactly when `left > arrival + ring`. After
//! ringing the caller leaves other threads' slices to the woken workers for up to [`STEAL_AFTER`] before claiming
//! what is left itself. Tiny dispatches finish on the caller without any system call; long ones lose at most the
//! time it took to see that they are long.

use crate::types::Mood;
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering::*};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long an idle worker in the `Parked` mood keeps spinning before it sleeps in the OS: short enough that an
/// idle executor costs about 0.05 ms of CPU per second of idleness (one spin after the last call), long enough
/// that back-to-back dispatches do not pay a wake-up.
pub const PARK_AFTER: Duration = Duration::from_micros(50);

/// How long the tasks after a lazily waking dispatch's first must have run before their pace is trusted: long
/// enough that the clock reads (tens of nanoseconds on a virtual machine) do not dominate it.
const PACE_WINDOW: Duration = Duration::from_micros(1);

/// What a wake is assumed to cost until this engine has measured its own (nanoseconds; ring, arrival): a bare-metal
/// machine's futex wake and wake-up latency.
const WAKE_COST_GUESS: (u64, u64) = (2_000, 4_000);

/// How long the caller of a dispatch that woke workers late leaves their slices to them before it steals.
pub const STEAL_AFTER: Duration = Duration::from_micros(200);

/// How long a dispatching caller spins for its workers to finish before it sleeps on a futex too.
const CALLER_SPIN: Duration = Duration::from_micros(100);

const OPEN: u64 = 1;
const ENTER: u64 = 2;
const GEN_SHIFT: u32 = 32;
const ENTERED_MASK: u64 = 0xFFFF_FFFE;

#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Padded<T>(pub T);

/// The hot line every idle worker reads.
#[derive(Default)]
struct Hot {
    state: AtomicU64,
    stop: AtomicBool,
    mood: AtomicU8,
}

pub(crate) type Job<'a> = dyn Fn(usize) + Sync + 'a;

/// What waking parked workers costs on this machine, learned from this engine's wakes (moving averages, ns).
struct WakeCost {
    /// The caller's `futex_wake`: the system call, and on a virtual machine the interrupt it traps on.
    ring: AtomicU64,
    /// From the start of a ring until a woken worker runs.
    arrival: AtomicU64,
    /// When the last dispatch rang, in ns since `epoch` (0 for never): a worker that wakes after it measures
    /// `arrival`.
    rang_at: AtomicU64,
    epoch: Instant,
}

impl WakeCost {
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
    /// Folds `sample` into the moving average `average` (weight 1/8).
    fn fold(average: &AtomicU64, sample: u64) {
        let old = average.load(Relaxed);
        average.store(old - old / 8 + sample / 8, Relaxed);
    }
    /// The whole cost of a wake to the caller's dispatch: its ring, then the wait for the worker.
    fn total(&self) -> u64 {
        self.ring.load(Relaxed) + self.arrival.load(Relaxed)
    }
}

pub(crate) struct Engine {
    hot: Padded<Hot>,
    job: Padded<UnsafeCell<Option<*const Job<'static>>>>,
    exited: Padded<AtomicU32>,
    bell: Padded<(AtomicU32, AtomicU32)>, // (futex word, sleepers)
    wake_cost: Padded<WakeCost>,
    caller: Padded<(AtomicU32, AtomicU32)>, // (futex word, caller parked)
    /// Deferred calls queued and not yet taken by any thread.
    pub queued: Padded<AtomicUsize>,
    /// Per-thread slice claims for the static verbs: the generation that last claimed the slice.
    claims: Box<[Padded<AtomicU64>]>,
    pub dispatch: Mutex<()>,
    /// The generation of the last dispatch; written only under `dispatch`.
    generation: Padded<Cell<u64>>,
    /// When the running dispatch deferred waking parked workers, and still has not woken them; caller-only.
    wake_pending: Cell<Option<Instant>>,
    /// The tasks of the running lazily waking dispatch; caller-only.
    lazy_tasks: Cell<usize>,
    /// When the caller finished its first task of the running lazily waking dispatch; caller-only.
    first_task: Cell<Option<Instant>>,
    /// When the running dispatch woke parked workers late, if it did; caller-only.
    woke_late: Cell<Option<Instant>>,
    /// When the running dispatch started; caller-only.
    started: Cell<Option<Instant>>,
    pub threads: usize,
}

// SAFETY: `job` and `generation` are written only by the holder of `dispatch` while no worker is inside a
// generation (see the protocol above); everything else is atomic.
unsafe impl Sync for Engine {}
// SAFETY: the one field that is not `Send` is the job pointer, to a `Sync` closure, dereferenced only inside the
// generation of the dispatch that owns the closure (see `Sync`).
unsafe impl Send for Engine {}

thread_local! {
    /// The engine this thread is a worker of, or is dispatching on (as a usize address; 0 for none).
    static OWNER: Cell<usize> = const { Cell::new(0) };
}

fn futex_wait(word: &AtomicU32, expected: u32) {
    // SAFETY: the address is a live, aligned u32; a spurious return is handled by every caller's loop.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

fn futex_wake(word: &AtomicU32, count: i32) {
    // SAFETY: as above.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, count);
    }
}

fn mood_code(mood: Mood) -> u8 {
    match mood {
        Mood::Parked => 0,
        Mood::Spinning => 1,
    }
}

impl Engine {
    pub fn new(threads: usize) -> Engine {
        Engine {
            hot: Padded::default(),
            job: Padded(UnsafeCell::new(None)),
            exited: Padded::default(),
            bell: Padded::default(),
            wake_cost: Padded(WakeCost {
                ring: AtomicU64::new(WAKE_COST_GUESS.0),
                arrival: AtomicU64::new(WAKE_COST_GUESS.1),
                rang_at: AtomicU64::new(0),
                epoch: Instant::now(),
            }),
            caller: Padded::default(),
            queued: Padded::default(),
            claims: (0..threads).map(|_| Padded(AtomicU64::new(0))).collect(),
            dispatch: Mutex::new(()),
            generation: Padded(Cell::new(0)),
            wake_pending: Cell::new(None),
            lazy_tasks: Cell::new(0),
            first_task: Cell::new(None),
            woke_late: Cell::new(None),
            started: Cell::new(None),
            threads,
        }
    }

    #[inline]
    fn address(&self) -> usize {
        self as *const Engine as usize
    }

    /// Whether the calling thread is one of this engine's workers or is inside one of its dispatches.
    #[inline]
    pub fn is_own_thread(&self) -> bool {
        OWNER.with(|o| o.get() == self.address())
    }

    pub fn mood(&self) -> Mood {
        if self.hot.0.mood.load(Relaxed) == 1 {
            Mood::Spinning
        } else {
            Mood::Parked
        }
    }

    /// Sets the idle mood; the workers are woken only when it changes (a parked worker that stays parked need
    /// not wake, so draining an idle executor makes no system call).
    #[inline]
    pub fn set_mood(&self, mood: Mood) {
        let code = mood_code(mood);
        if self.hot.0.mood.load(Relaxed) != code && self.hot.0.mood.swap(code, SeqCst) != code {
            self.ring(i32::MAX);
        }
    }

    pub fn stop(&self) {
        self.hot.0.stop.store(true, SeqCst);
        self.ring(i32::MAX);
    }

    /// Wakes up to `count` parked workers, if any sleep. Call after publishing the news with a SeqCst write.
    pub fn ring(&self, count: i32) {
        let (bell, sleepers) = &self.bell.0;
        if sleepers.load(SeqCst) > 0 {
            bell.fetch_add(1, SeqCst);
            futex_wake(bell, count);
        }
    }

    /// The loop of spawned worker `index`. `deferred` runs one queued deferred call, if any is still queued.
    pub fn worker_loop(&self, index: usize, deferred: &dyn Fn()) {
        OWNER.with(|o| o.set(self.address()));
        let hot = &self.hot.0;
        let mut last = 0u64;
        let mut idle_since = Instant::now();
        let mut spins = 0u32;
        loop {
            let s = hot.state.load(Acquire);
            let generation = s >> GEN_SHIFT;
            if generation != last {
                if s & OPEN != 0 {
                    if hot.state.compare_exchange_weak(s, s + ENTER, Acquire, Relaxed).is_err() {
                        continue;
                    }
                    // SAFETY: the job was written before the generation opened and stays valid until every
                    // thread that entered has exited.
                    let job = unsafe { (*self.job.0.get()).unwrap_unchecked() };
                    // SAFETY: as above: the job lives until this thread exits the generation, below.
                    unsafe { (*job)(index) };
                    self.exit();
                    idle_since = Instant::now();
                    spins = 0;
                }
                last = generation;
                continue;
            }
            if self.queued.0.load(Relaxed) > 0 {
                deferred();
                idle_since = Instant::now();
                spins = 0;
                continue;
            }
            if hot.stop.load(Relaxed) {
                return;
            }
            std::hint::spin_loop();
            if hot.mood.load(Relaxed) == 1 {
                continue;
            }
            spins += 1;
            if !spins.is_multiple_of(64) || idle_since.elapsed() < PARK_AFTER {
                continue;
            }
            self.park(last);
            idle_since = Instant::now();
            spins = 0;
        }
    }

    fn park(&self, last: u64) {
        let (bell, sleepers) = &self.bell.0;
        sleepers.fetch_add(1, SeqCst);
        let seen = bell.load(SeqCst);
        let hot = &self.hot.0;
        if hot.state.load(SeqCst) >> GEN_SHIFT == last
            && !hot.stop.load(SeqCst)
            && self.queued.0.load(SeqCst) == 0
            && hot.mood.load(SeqCst) == 0
        {
            let cost = &self.wake_cost.0;
            let slept = cost.now();
            futex_wait(bell, seen);
            // Woken by a dispatch's ring (not by a mood change, a deferred call or shutdown): how long it took.
            let rang = cost.rang_at.load(SeqCst);
            if rang > slept {
                WakeCost::fold(&cost.arrival, cost.now().saturating_sub(rang));
            }
        }
        sleepers.fetch_sub(1, SeqCst);
    }

    /// Wakes every parked worker for the running dispatch, timing the ring (a worker that wakes times its arrival).
    fn wake_for_dispatch(&self) {
        if self.bell.0 .1.load(SeqCst) == 0 {
            return;
        }
        let cost = &self.wake_cost.0;
        let start = cost.now().max(1);
        cost.rang_at.store(start, SeqCst);
        self.ring(i32::MAX);
        WakeCost::fold(&cost.ring, cost.now().saturating_sub(start));
    }

    fn exit(&self) {
        self.exited.0.fetch_add(1, SeqCst);
        let (word, parked) = &self.caller.0;
        if parked.load(SeqCst) != 0 {
            word.fetch_add(1, SeqCst);
            futex_wake(word, 1);
        }
    }

    /// Waits (spinning, then on a futex) until `exited` reaches `target`.
    fn wait_exited(&self, target: u32) {
        let start = Instant::now();
        let mut spins = 0u32;
        while self.exited.0.load(Acquire) < target {
            std::hint::spin_loop();
            spins += 1;
            if !spins.is_multiple_of(64) || start.elapsed() < CALLER_SPIN {
                continue;
            }
            let (word, parked) = &self.caller.0;
            parked.store(1, SeqCst);
            let seen = word.load(SeqCst);
            if self.exited.0.load(SeqCst) < target {
                futex_wait(word, seen);
            }
            parked.store(0, SeqCst);
        }
    }

    /// Called by `job` after each task it finishes (`done` counts them on this thread). On the caller of a lazily
    /// waking dispatch, rings the bell once what the caller alone would still take, at its pace so far, exceeds
    /// what a wake costs (see the module docs); elsewhere it does nothing.
    #[inline]
    pub fn after_task(&self, thread: usize, done: usize) {
        if thread != 0 {
            return;
        }
        let Some(start) = self.wake_pending.get() else { return };
        let left = self.lazy_tasks.get().saturating_sub(done) as u128;
        let cost = u128::from(self.wake_cost.0.total());
        let ring = if done == 1 {
            // The first task carries the dispatch's own start: trusted only when it alone outlasts a wake.
            let first = Instant::now();
            self.first_task.set(Some(first));
            left > 0 && first.duration_since(start).as_nanos() > cost
        } else if done.is_power_of_two() || done.is_multiple_of(64) {
            // The pace of the tasks after the first, once they have run long enough that reading the clock is
            // not most of it.
            let since_first = self.first_task.get().map_or(Duration::ZERO, |first| first.elapsed());
            since_first.as_nanos() >= cost.min(PACE_WINDOW.as_nanos())
                && since_first.as_nanos() * left / (done - 1) as u128 > cost
        } else {
            false
        };
        if ring {
            self.wake_pending.set(None);
            self.woke_late.set(Some(Instant::now()));
            self.wake_for_dispatch();
        }
    }

    /// Called by `thread` when it has finished its own slice and is about to take another thread's. On the caller of
    /// a dispatch that woke nobody late, closes the generation if no worker has entered it yet, so none will: the
    /// caller then runs the other slices alone, on cache lines it already owns, and waits for nobody. A worker
    /// that came in time keeps its own slice (the caller steals only what is still unclaimed), so the owner of
    /// a slice, and of the lines its tasks touch, does not flip from one dispatch to the next on a close race.
    #[inline]
    pub fn close_if_alone(&self, thread: usize) {
        if thread != 0 || self.wake_pending.get().is_some() || self.woke_late.get().is_some() {
            return;
        }
        let state = &self.hot.0.state;
        let s = state.load(Relaxed);
        if s & OPEN != 0 && s & ENTERED_MASK == 0 {
            // A worker's entering CAS and this one cannot both succeed on the same value: either the worker is in
            // (and `broadcast` waits for it) or it sees the generation closed and never reads `job`.
            let _ = state.compare_exchange(s, s & !OPEN, AcqRel, Relaxed);
        }
    }

    /// Before `thread` claims another thread's `slice`: the caller of a dispatch that woke workers late gives
    /// them time to claim it themselves, so a few long tasks still run in parallel: up to [`STEAL_AFTER`], and
    /// never longer than half of what its own slice took (past that, doing the slice itself is faster than waiting
    /// for a wake-up). Every slice is claimed by someone in the end: the caller claims what is left.
    #[inline]
    pub fn before_stealing(&self, thread: usize, slice: usize, generation: u64) {
        let (Some(woke), Some(started)) = (self.woke_late.get(), self.started.get()) else { return };
        if thread != 0 {
            return;
        }
        let patience = STEAL_AFTER.min(woke.saturating_duration_since(started).max(started.elapsed()) / 2);
        let start = Instant::now();
        while self.claims[slice].0.load(Acquire) != generation && start.elapsed() < patience {
            std::hint::spin_loop();
        }
    }

    /// Runs `job` on every thread: the caller runs `job(0)`, each worker that enters in time runs
    /// `job(its index)`. With `every_thread`, waits for every worker to have run it. With `lazy: Some(tasks)`,
    /// parked workers are woken only once the caller alone would take longer than a wake (see the module docs);
    /// `job` must then report each of its `tasks` it finishes through [`Engine::after_task`]. The caller must
    /// hold the dispatch lock, and `threads` must exceed 1.
    pub fn broadcast(&self, job: &Job<'_>, every_thread: bool, lazy: Option<usize>) {
        let previous_owner = OWNER.with(|o| o.replace(self.address()));
        let generation = self.generation.0.get() + 1;
        self.generation.0.set(generation);
        // SAFETY: the lifetime is erased only for the duration of this call, which waits for every thread that
        // could read the pointer; the state is closed and nobody is inside (the previous dispatch waited).
        unsafe {
            *self.job.0.get() =
                Some(std::mem::transmute::<&Job<'_>, &'static Job<'static>>(job) as *const Job<'static>);
        }
        self.exited.0.store(0, Relaxed);
        self.hot.0.state.store(generation << GEN_SHIFT | OPEN, SeqCst);
        self.woke_late.set(None);
        self.started.set(None);
        match lazy {
            Some(tasks) if !every_thread && self.bell.0 .1.load(SeqCst) > 0 => {
                let now = Instant::now();
                self.wake_pending.set(Some(now));
                self.started.set(Some(now));
                self.lazy_tasks.set(tasks);
            }
            _ => self.wake_for_dispatch(),
        }
        job(0);
        self.wake_pending.set(None);
        if every_thread {
            self.wait_exited(self.threads as u32 - 1);
        }
        let mut s = self.hot.0.state.load(Relaxed);
        loop {
            match self.hot.0.state.compare_exchange_weak(s, s & !OPEN, AcqRel, Relaxed) {
                Ok(_) => break,
                Err(seen) => s = seen,
            }
        }
        let entered = ((s & ENTERED_MASK) >> 1) as u32;
        self.wait_exited(entered);
        OWNER.with(|o| o.set(previous_owner));
    }

    /// The generation the next `broadcast` will open; read it under the dispatch lock to tag slice claims.
    pub fn next_generation(&self) -> u64 {
        self.generation.0.get() + 1
    }

    /// Claims static slice `slice` for generation `generation`; true for exactly one claimant.
    #[inline]
    pub fn claim(&self, slice: usize, generation: u64) -> bool {
        let c = &self.claims[slice].0;
        c.load(Relaxed) != generation && c.swap(generation, AcqRel) != generation
    }

    /// Marks the calling thread as inside a dispatch of this engine while `f` runs inline (nested calls).
    pub fn inline<R>(&self, f: impl FnOnce() -> R) -> R {
        let previous = OWNER.with(|o| o.replace(self.address()));
        let r = f();
        OWNER.with(|o| o.set(previous));
        r
    }
}
