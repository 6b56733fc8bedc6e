//! Executors: NUMA-placed host thread pools with fork-join verbs and deferred calls, and per-device CUDA streams.
//!
//! # Threads
//!
//! A RAM executor of `threads` threads (at most [`MAX_THREADS`]) is the calling thread plus `threads - 1` spawned
//! workers: every fork-join verb ([`Executor::for_n`], [`Executor::for_n_dynamic`], [`Executor::for_slices`],
//! [`Executor::for_threads`]) runs part of the work on the thread that calls it, as ForkUnion's caller-inclusive
//! pools do, and thread index 0 is always the caller. Worker `i` is pinned (through hwloc) to the `i`-th core of
//! the chosen NUMA nodes, taken round-robin node by node so the threads spread evenly; the calling thread is never
//! pinned. When the OS refuses a binding (containers often do), the worker runs unpinned and
//! [`Executor::pinning_fallback`] says why.
//!
//! # Dispatch
//!
//! One dispatch runs at a time per executor (others wait on a lock). The static verbs split `0..n` into one
//! contiguous slice per thread; each thread runs its own slice first, then claims any slice nobody has claimed
//! yet, so the caller never waits for a worker that has not woken up: tiny dispatches often finish on the caller
//! alone. [`Executor::for_threads`] is the exception: it calls every thread index on its own thread. A verb
//! called from inside a task of the same executor (or from a deferred call on one of its workers) runs inline on
//! the calling thread, serially. A panic inside a task is caught on the thread that ran it, the other slices
//! still run, and the verb returns an [`ErrorKind::Internal`](crate::ErrorKind::Internal) error; the executor
//! stays usable.
//!
//! # Moods
//!
//! `Spinning` workers busy-wait with a pause hint between dispatches. `Parked` workers (the default) spin for
//! [`PARK_AFTER`] (50 µs) after their last task, then sleep on a futex until the next dispatch or deferred call
//! wakes them: an idle parked executor uses about 0.05 ms of CPU per second.
//!
//! # Deferred calls
//!
//! [`Executor::submit`] queues a closure that a worker runs when it has no fork-join work; at most
//! `deferredLimit` (default [`DEFAULT_DEFERRED_LIMIT`]) are queued or running, and a further submission blocks
//! until one completes. With `threads == 1` there is no worker, so queued calls run when the caller drains, frees,
//! or submits into a full queue (which then runs the oldest call itself). A panicking deferred call does not take
//! its worker down: it is recorded, and the next [`Executor::drain`] (or [`Executor::free`]) reports it as an
//! internal error after waiting for everything else.
//!
//! # Scratch
//!
//! Verbs carve their activations from one host arena the executor owns ([`Executor::host_scratch`]), held for the
//! length of a call and reused by the next. `scratchLimit` (default [`DEFAULT_SCRATCH_LIMIT`], 256 MiB; RAM
//! executors set it, others take the default) caps it: a verb plans its work to fit ([`crate::verbs::encode`] splits a
//! call into batches by their token count) and the arena is trimmed back under it when a call ends.
//!
//! # Life cycle
//!
//! [`Executor::free`] runs what is pending, stops and joins the workers; a second `free` does nothing; any other
//! call afterwards is a freed-handle error. Dropping the last clone does the same. `free` (or `drain`) from one
//! of the executor's own threads would wait for itself, so it is an in-use error instead.

mod deferred;
mod fork_join;
mod forked;
pub(crate) mod placement;
mod pool;
mod scratch;
mod shared_default;
#[cfg(test)]
mod tests;
mod vram;
mod vram_rules;

pub use placement::current_affinity;
pub use pool::PARK_AFTER;
pub use scratch::{Scratch, ScratchGuard};
pub(crate) use vram::{Bound, Primary};

use crate::error::{Error, ErrorKind, Result};
use crate::handle::Lifecycle;
use crate::types::*;
use deferred::Deferred;
use pool::Engine;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Deferred calls an executor tracks at once when `deferredLimit` is absent (the IDL's default).
pub const DEFAULT_DEFERRED_LIMIT: u32 = crate::ExecutorForRamConfig::DEFAULT_DEFERRED_LIMIT;
/// Host scratch bytes a RAM executor's verbs hold at most when `scratchLimit` is absent (256 MiB).
pub const DEFAULT_SCRATCH_LIMIT: u64 = crate::ExecutorForRamConfig::DEFAULT_SCRATCH_LIMIT;

/// The most threads one RAM executor spawns: a larger `threads` is an invalid argument, checked before anything is
/// allocated per thread (4294967295 threads would otherwise ask for half a terabyte of per-thread state at once).
pub const MAX_THREADS: u32 = 65_536;

/// The threads or streams a verb runs on, shared across models. Cloning shares the same executor.
#[derive(Clone)]
pub struct Executor {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("threads", &self.inner.threads)
            .field("devices", &self.inner.gpu.devices.len())
            .field("freed", &self.inner.lifecycle.is_freed())
            .finish()
    }
}

/// What the workers share with the handle.
struct Shared {
    engine: Engine,
    deferred: Deferred,
}

impl Shared {
    /// Sets the engine's idle mood and mirrors it into the quiet word. Concurrent drains may set different moods:
    /// each writes the engine's mood as it reads it after its own change and retries until the engine agrees, so
    /// the word ends with the mood the engine ends with.
    #[inline(always)]
    fn set_mood(&self, mood: Mood) {
        self.engine.set_mood(mood);
        let quiet = &self.deferred.quiet;
        loop {
            let current = self.engine.mood();
            let spinning = matches!(current, Mood::Spinning);
            if (quiet.load(Ordering::Relaxed) & deferred::QUIET_SPINNING != 0) != spinning {
                if spinning {
                    quiet.fetch_or(deferred::QUIET_SPINNING, Ordering::SeqCst);
                } else {
                    quiet.fetch_and(!deferred::QUIET_SPINNING, Ordering::SeqCst);
                }
            }
            if self.engine.mood() == current {
                return;
            }
        }
    }

    fn run_one_deferred(&self) {
        if let Some(call) = self.deferred.take(&self.engine) {
            self.deferred.run(call);
        }
    }
}

/// An executor's quiet word, kept alive as long as this lives (see [`Executor::quiet`]).
pub struct Quiet {
    shared: Arc<Shared>,
}

/// A verb in flight on an executor (see [`Executor::verb_in_flight`]); dropping it ends the verb.
#[must_use = "the verb counts as in flight only while the guard lives"]
pub struct VerbInFlight {
    shared: Arc<Shared>,
    ticket: u64,
}

impl Drop for VerbInFlight {
    fn drop(&mut self) {
        self.shared.deferred.leave(self.ticket);
    }
}

impl Quiet {
    /// The word: compare it with [`Executor::drain_quiet_when`]. Its address is stable while this `Quiet` lives.
    pub fn word(&self) -> &std::sync::atomic::AtomicU32 {
        &self.shared.deferred.quiet
    }
}

struct Inner {
    lifecycle: Arc<Lifecycle>,
    shared: Arc<Shared>,
    threads: usize,
    workers: Mutex<Vec<JoinHandle<()>>>,
    stopped: AtomicBool,
    /// Per thread index: the CPUs the OS reported for the worker after pinning, `None` when unpinned.
    pinned: Vec<Option<Vec<usize>>>,
    pinning_fallback: Option<String>,
    cpu_class: Option<&'static str>,
    /// `memoryDomains` as given; `None` for every node.
    memory_domains: Option<Vec<u32>>,
    gpu: vram::Gpu,
    /// Activation scratch the verbs reuse across calls (see [`Executor::host_scratch`]).
    scratch: Mutex<Scratch>,
    /// `scratchLimit`: bytes of host scratch the verbs plan their calls to fit.
    scratch_limit: usize,
    /// The fork count of the process that spawned the threads (see `forked.rs`).
    forks: u64,
}

fn positive(argument: &str, value: Option<u32>) -> Result<()> {
    match value {
        Some(0) => Err(Error::invalid_argument(argument, "must be at least 1, got 0")),
        _ => Ok(()),
    }
}

fn cpu_class(value: Option<&str>) -> Result<Option<&'static str>> {
    value.map(|c| crate::capabilities::validate_cpu_class("config.cpu_class", c)).transpose()
}

/// A validated host placement: everything needed to spawn the threads.
struct HostPlan {
    plan: placement::Plan,
    threads: usize,
    deferred_limit: usize,
    scratch_limit: usize,
    cpu_class: Option<&'static str>,
    memory_domains: Option<Vec<u32>>,
}

fn host_plan(
    memory_domains: Option<&[u32]>,
    cpu: Option<&str>,
    threads: Option<u32>,
    deferred_limit: Option<u32>,
    scratch_limit: Option<u64>,
) -> Result<HostPlan> {
    positive("config.threads", threads)?;
    positive("config.deferred_limit", deferred_limit)?;
    if scratch_limit == Some(0) {
        return Err(Error::invalid_argument("config.scratch_limit", "must be at least 1 byte, got 0"));
    }
    if let Some(t) = threads.filter(|t| *t > MAX_THREADS) {
        return Err(Error::invalid_argument("config.threads", format!("must be at most {MAX_THREADS}, got {t}")));
    }
    // One thread and no placement asked for: the caller is the only thread and is never pinned, so the topology
    // (milliseconds to discover, per process) is not read at all. Meshes of many one-thread processes start faster.
    let plan = match (threads, memory_domains) {
        (Some(1), None) => placement::Plan::caller_only(),
        _ => placement::plan("config.memory_domains", memory_domains)?,
    };
    let cpu_class = cpu_class(cpu)?;
    let threads = threads.map_or_else(|| plan.default_threads(), |t| t as usize);
    Ok(HostPlan {
        plan,
        threads,
        deferred_limit: deferred_limit.unwrap_or(DEFAULT_DEFERRED_LIMIT) as usize,
        // A limit past the address space cannot bind: saturate it.
        scratch_limit: usize::try_from(scratch_limit.unwrap_or(DEFAULT_SCRATCH_LIMIT)).unwrap_or(usize::MAX),
        cpu_class,
        memory_domains: memory_domains.map(<[u32]>::to_vec),
    })
}

impl Executor {
    fn spawn(host: HostPlan, gpu: vram::Gpu) -> Result<Executor> {
        let engine = Engine::new(host.threads);
        let shared = Arc::new(Shared { engine, deferred: Deferred::new(host.deferred_limit) });
        let (tx, rx) = std::sync::mpsc::channel::<(usize, std::result::Result<Vec<usize>, String>)>();
        let mut workers = Vec::with_capacity(host.threads.saturating_sub(1));
        let mut spawn_error = None;
        for index in 1..host.threads {
            let shared = shared.clone();
            let tx = tx.clone();
            let core = host.plan.core_of(index).to_vec();
            let spawned = std::thread::Builder::new().name(format!("uform-exec-{index}")).spawn(move || {
                let pinned = placement::pin_current_thread(&core).map(|()| placement::current_affinity());
                let _ = tx.send((index, pinned));
                drop(tx);
                let s = &*shared;
                s.engine.worker_loop(index, &|| s.run_one_deferred());
            });
            match spawned {
                Ok(handle) => workers.push(handle),
                Err(e) => {
                    spawn_error =
                        Some(Error::new(ErrorKind::Io, format!("spawning executor thread {index} failed: {e}")));
                    break;
                }
            }
        }
        drop(tx);
        let mut pinned = vec![None; host.threads];
        let mut pinning_fallback = None;
        for (index, result) in rx.iter() {
            match result {
                Ok(cpus) => pinned[index] = Some(cpus),
                Err(why) => {
                    pinning_fallback.get_or_insert_with(|| match &placement::machine().fallback {
                        Some(note) => format!("thread {index} runs unpinned: {why} ({note})"),
                        None => format!("thread {index} runs unpinned: {why}"),
                    });
                }
            }
        }
        let inner = Inner {
            lifecycle: Arc::new(Lifecycle::new()),
            shared,
            threads: host.threads,
            workers: Mutex::new(workers),
            stopped: AtomicBool::new(false),
            pinned,
            pinning_fallback,
            cpu_class: host.cpu_class,
            memory_domains: host.memory_domains,
            gpu,
            scratch: Mutex::new(Scratch::default()),
            scratch_limit: host.scratch_limit,
            forks: forked::generation(),
        };
        if let Some(e) = spawn_error {
            drop(inner); // stops and joins what was spawned
            return Err(e);
        }
        if !inner.gpu.streams.is_empty() {
            // `drain` must synchronise the streams, which the word cannot mirror: it never reads as quiet.
            inner.shared.deferred.quiet.fetch_or(deferred::QUIET_STREAMS, Ordering::SeqCst);
        }
        Ok(Executor { inner: Arc::new(inner) })
    }

    /// Spawns host threads for RAM-resident models (see the module documentation for placement and defaults).
    pub fn for_ram(config: ExecutorForRamConfig) -> Result<Executor> {
        let host = host_plan(
            config.memory_domains.as_deref(),
            config.cpu_class.as_deref(),
            config.threads,
            config.deferred_limit,
            config.scratch_limit,
        )?;
        Executor::spawn(host, vram::Gpu::default())
    }

    /// Opens one stream per device for VRAM-resident models.
    ///
    /// Checks run in this order, so that what needs no GPU is testable without one: the shape of the arguments
    /// (zero limits, an empty or repeated device list, a stream count that differs from the device count, an
    /// unknown `gpuClass`, `memoryDomains` and `cpuClass` of the host decoders); then an unavailable error when
    /// [`gpu_devices`](crate::gpu_devices) lists none; then each ordinal against the device count; then the
    /// vendor (AMD is unsupported for now) and the driver. Absent `devices` takes the device of this process's
    /// local rank (`LOCAL_RANK`, then `SLURM_LOCALID`, else 0; see [`vram_rules::default_ordinal`]). `gpuClass`
    /// must be every chosen device's class and `scratchLimit` at most its memory. Borrowed `streams` may not be
    /// 0, `CU_STREAM_LEGACY` or `CU_STREAM_PER_THREAD`, nor repeat, and each must belong to its device's primary
    /// context. Own streams are non-blocking streams on the primary context. The calling thread's current CUDA
    /// context is the same after the call as before. The host decoders are a RAM pool placed by `memoryDomains`
    /// and `cpuClass`, with the default thread count.
    pub fn for_vram(config: ExecutorForVramConfig) -> Result<Executor> {
        positive("config.deferred_limit", config.deferred_limit)?;
        if config.scratch_limit == Some(0) {
            return Err(Error::invalid_argument("config.scratch_limit", "must be at least 1 byte, got 0"));
        }
        vram::check_shape(&config)?;
        let host = host_plan(
            config.memory_domains.as_deref(),
            config.cpu_class.as_deref(),
            None,
            config.deferred_limit,
            None,
        )?;
        let gpu = vram::open(&config)?;
        Executor::spawn(host, gpu)
    }

    /// Would borrow a ForkUnion `fu_pool_t` by address; validates `config`, then reports unsupported.
    pub fn on_pool(pool: u64, config: ExecutorOnPoolConfig) -> Result<Executor> {
        positive("config.deferred_limit", config.deferred_limit)?;
        placement::plan("config.memory_domains", config.memory_domains.as_deref())?;
        cpu_class(config.cpu_class.as_deref())?;
        Err(Error::unsupported(format!(
            "{} cannot borrow ForkUnion pool {pool:#x}: borrowing a ForkUnion pool is not designed yet",
            crate::path::name("on_pool")
        )))
    }

    #[inline(always)]
    fn check(&self, method: &str) -> Result<()> {
        self.inner.lifecycle.check("Executor", method)?;
        self.check_process()
    }

    #[cold]
    fn own_thread_error(&self, method: &str) -> Error {
        Error::in_use(format!(
            "`{method}` was called from one of this Executor's own threads and would wait for itself; call it from another thread"
        ))
    }

    /// Waits for every deferred call submitted so far, then (for a VRAM executor) for everything queued so far on
    /// its streams, then idles in `mood`. Reports deferred calls that panicked since the last report as an
    /// internal error (the mood is set either way).
    #[inline(always)]
    pub fn drain(&self, mood: Mood) -> Result<()> {
        match self.try_drain(mood) {
            Some(done) => done,
            None => self.drain_busy(mood),
        }
    }

    /// [`Executor::drain`] when it can finish without waiting: `None` when deferred calls are in flight (or a
    /// panic awaits its report), and the call would have to wait; otherwise what `drain` returns, having set the
    /// mood. Bindings that hold a lock across calls (Python's GIL) try this first and release the lock only to wait.
    #[inline(always)]
    pub fn try_drain(&self, mood: Mood) -> Option<Result<()>> {
        if let Err(freed) = self.check("drain") {
            return Some(Err(freed));
        }
        let shared = &self.inner.shared;
        if shared.engine.is_own_thread() {
            return Some(Err(self.own_thread_error("drain")));
        }
        if !shared.deferred.is_settled() || !self.inner.gpu.streams.is_empty() {
            return None;
        }
        shared.set_mood(mood);
        Some(Ok(()))
    }

    /// The executor's quiet word, for bindings that can read memory without calling in (Node reads it from
    /// JavaScript through an external `ArrayBuffer`): while it equals [`Executor::drain_quiet_when`]`(mood)`, a
    /// `drain(mood)` would return at once and change nothing, so such a binding may skip the call. The word is
    /// written with the state it mirrors, before the call that changed that state returns. (One difference: a
    /// `drain` made from inside one of this executor's own dispatches fails as in use, which the word cannot
    /// tell; JavaScript and Kotlin never run there.) The word lives as long as the `Quiet` and as long as this
    /// executor (any clone of it), which holds the same state: Kotlin keeps only its address while it holds the
    /// executor.
    pub fn quiet(&self) -> Quiet {
        Quiet { shared: self.inner.shared.clone() }
    }

    /// What [`Executor::quiet`] holds while a `drain(mood)` would return at once: not freed, nothing in flight,
    /// no panic to report, and already idling in `mood`.
    pub const fn drain_quiet_when(mood: Mood) -> u32 {
        deferred::QUIET_SETTLED | if matches!(mood, Mood::Spinning) { deferred::QUIET_SPINNING } else { 0 }
    }

    #[cold]
    #[inline(never)]
    fn drain_busy(&self, mood: Mood) -> Result<()> {
        self.check("drain")?;
        let shared = &self.inner.shared;
        let report = shared.deferred.drain(&shared.engine);
        let streams = self.inner.gpu.synchronize();
        shared.set_mood(mood);
        report.and(streams)
    }

    /// Whether `free` has run: every later call but `free` fails as freed.
    pub fn is_freed(&self) -> bool {
        self.inner.lifecycle.is_freed()
    }

    /// Counts a verb that a caller's thread runs on this executor (a model's `encodeText`) as in flight until the
    /// guard drops: a `drain` from any other thread meanwhile waits for it, as for a deferred call.
    pub fn verb_in_flight(&self) -> VerbInFlight {
        let ticket = self.inner.shared.deferred.enter();
        VerbInFlight { shared: self.inner.shared.clone(), ticket }
    }

    /// Runs every deferred call and joins the threads now; a second `free` does nothing.
    pub fn free(&self) -> Result<()> {
        if self.inner.orphaned() {
            // The parent's threads are not here to join: freed for this process, forgotten when dropped.
            self.inner.lifecycle.begin_free("Executor", ("mesh or model", "meshes or models"))?;
            return Ok(());
        }
        if self.inner.shared.engine.is_own_thread() && !self.inner.lifecycle.is_freed() {
            return Err(self.own_thread_error("free"));
        }
        if !self.inner.lifecycle.begin_free("Executor", ("mesh or model", "meshes or models"))? {
            return Ok(());
        }
        let shared = &self.inner.shared;
        shared.deferred.quiet.fetch_or(deferred::QUIET_FREED, Ordering::SeqCst);
        let report = shared.deferred.drain(&shared.engine);
        self.inner.shutdown();
        // Anything submitted concurrently with the free ran on the workers before they stopped, or runs here.
        let late = shared.deferred.drain(&shared.engine);
        self.inner.gpu.release();
        report.and(late)
    }

    /// Queues `f` to run later on a worker, waiting while `deferredLimit` calls are in flight.
    pub fn submit(&self, f: impl FnOnce() + Send + 'static) -> Result<()> {
        self.check("submit")?;
        let shared = &self.inner.shared;
        let help = self.inner.threads == 1 || shared.engine.is_own_thread();
        shared.deferred.submit(Box::new(f), help, &shared.engine);
        shared.engine.ring(1);
        Ok(())
    }

    /// The GPUs this executor drives, in its device order; empty for a RAM executor.
    pub fn devices(&self) -> Result<Vec<GpuDevice>> {
        self.check("devices")?;
        Ok(self.inner.gpu.devices.clone())
    }

    /// The CUDA stream addresses (`CUstream`), one per device in device order: borrowed ones as given, the
    /// executor's own otherwise; empty for a RAM executor and after `free` (the executor's own streams are
    /// destroyed then).
    pub fn stream_addresses(&self) -> Vec<u64> {
        if self.inner.lifecycle.is_freed() {
            return Vec::new();
        }
        self.inner.gpu.streams.clone()
    }

    /// The per-device scratch ceiling in bytes, `None` for no ceiling.
    pub fn scratch_limit(&self) -> Option<u64> {
        self.inner.gpu.scratch_limit
    }

    /// Whether a device holding `held` bytes of scratch may allocate `more`: an out-of-memory error when that
    /// would pass `scratchLimit`. Every device scratch allocation asks this first.
    pub fn check_device_scratch(&self, held: u64, more: u64) -> Result<()> {
        vram_rules::check_scratch_request(self.inner.gpu.scratch_limit, held, more)
    }

    /// The NUMA nodes the executor's host threads were placed on: its `memoryDomains`, or every node of the machine.
    pub fn memory_domains(&self) -> Vec<u32> {
        match &self.inner.memory_domains {
            Some(nodes) => nodes.clone(),
            None => placement::machine().nodes.iter().map(|n| n.os_index).collect(),
        }
    }

    /// The life cycle a mesh borrows so the executor cannot be freed under it.
    pub fn lifecycle(&self) -> &Arc<Lifecycle> {
        &self.inner.lifecycle
    }

    /// Threads taking part in fork-join verbs: the calling thread plus the spawned workers.
    pub fn threads(&self) -> usize {
        self.inner.threads
    }

    /// The CPU class validated from `cpuClass`, `None` when it was absent.
    pub fn cpu_class(&self) -> Option<&'static str> {
        self.inner.cpu_class
    }

    /// The host activation scratch, held for the length of a verb's call: concurrent verbs on one executor take
    /// turns (their dispatches would take turns anyway). The arena grows to the largest call and is kept, up to
    /// [`Executor::host_scratch_limit`]: when the guard drops, an arena past the limit is given back.
    pub fn host_scratch(&self) -> Result<ScratchGuard<'_>> {
        self.check("host_scratch")?;
        let guard = self.inner.scratch.lock().unwrap_or_else(|p| p.into_inner());
        Ok(ScratchGuard { guard, limit: self.inner.scratch_limit })
    }

    /// A RAM executor's `scratchLimit` in bytes (the default for others): what a verb plans its call's host scratch
    /// to fit.
    pub fn host_scratch_limit(&self) -> usize {
        self.inner.scratch_limit
    }

    /// Bytes of host scratch the executor holds between calls (waits for a call holding it to end).
    pub fn host_scratch_bytes(&self) -> usize {
        self.inner.scratch.lock().unwrap_or_else(|p| p.into_inner()).bytes()
    }

    /// Per thread index, the CPUs the OS reported (`sched_getaffinity`, read by the worker itself right after
    /// pinning) for that worker; `None` for index 0 (the calling thread, never pinned) and for a worker that
    /// runs unpinned.
    pub fn pinned_cpus(&self) -> Vec<Option<Vec<usize>>> {
        self.inner.pinned.clone()
    }

    /// Why some worker runs unpinned, `None` when every worker was pinned.
    pub fn pinning_fallback(&self) -> Option<&str> {
        self.inner.pinning_fallback.as_deref()
    }

    /// The mood idle workers are in.
    pub fn mood(&self) -> Mood {
        self.inner.shared.engine.mood()
    }
}

impl Inner {
    /// Stops the workers and joins them (unless called on one of them, which then detaches them all).
    fn shutdown(&self) {
        if self.stopped.swap(true, Ordering::AcqRel) {
            return;
        }
        {
            let _guard = self.shared.engine.dispatch.lock().unwrap_or_else(|p| p.into_inner());
            self.shared.engine.stop();
        }
        let workers = std::mem::take(&mut *self.workers.lock().unwrap_or_else(|p| p.into_inner()));
        if self.shared.engine.is_own_thread() {
            return; // joining would wait for this very thread; the workers exit on their own
        }
        for worker in workers {
            let _ = worker.join();
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.orphaned() {
            return self.forget_parent_threads();
        }
        if !self.stopped.load(Ordering::Acquire) && !self.shared.engine.is_own_thread() {
            let _ = self.shared.deferred.drain(&self.shared.engine);
        }
        self.shutdown();
        self.gpu.release();
    }
}
