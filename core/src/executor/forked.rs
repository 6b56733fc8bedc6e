//! Executors across `fork()`. A child process holds a copy of every executor its parent made, but only the thread
//! that forked: a multi-thread executor's workers, and a VRAM executor's CUDA contexts, do not exist there. Such an
//! executor fails fast in the child with an unavailable error that names the fork, instead of waiting forever for
//! workers that never answer (what a `multiprocessing` pool forked after `Executor.for_ram(threads=2)` did).
//! Freeing or dropping it there forgets the parent's threads and streams without touching them. A one-thread RAM
//! executor has no workers and works in the child as in the parent. The default executor is per process
//! (`shared_default.rs`).

use super::{Executor, Inner};
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many forks separate this process from the first process that made an executor: a child increments its copy
/// (a `pthread_atfork` handler), so comparing it costs an atomic load, not a `getpid` system call per dispatch.
static FORKS: AtomicU64 = AtomicU64::new(0);

extern "C" fn forked_child() {
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// This process's fork count, for a new executor to keep; registers the handler on the first call.
pub(super) fn generation() -> u64 {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: `forked_child` is an `extern "C" fn()` that only increments an atomic, which is async-signal-safe
        // as a fork handler must be; the handler stays valid for the life of the process (a static function).
        let status = unsafe { libc::pthread_atfork(None, None, Some(forked_child)) };
        debug_assert_eq!(status, 0, "pthread_atfork fails only for want of memory");
    });
    FORKS.load(Ordering::Relaxed)
}

impl Inner {
    /// Whether this executor was made by a parent process and cannot run in this one.
    pub(super) fn orphaned(&self) -> bool {
        self.forks != FORKS.load(Ordering::Relaxed) && (self.threads > 1 || !self.gpu.streams.is_empty())
    }

    /// Drops this process's copies of the parent's worker handles and device streams without joining or
    /// releasing them: they belong to the parent.
    pub(super) fn forget_parent_threads(&mut self) {
        self.stopped.store(true, Ordering::Release);
        if let Ok(mut workers) = self.workers.try_lock() {
            std::mem::forget(std::mem::take(&mut *workers));
        }
        std::mem::forget(std::mem::take(&mut self.gpu));
    }
}

impl Executor {
    /// Fails when this executor came through a fork and cannot run here (see the module documentation).
    pub(super) fn check_process(&self) -> Result<()> {
        if !self.inner.orphaned() {
            return Ok(());
        }
        let (threads, devices) = (self.inner.threads, self.inner.gpu.streams.len());
        let what = if devices > 0 { format!("{devices} GPU streams") } else { format!("{threads} threads") };
        Err(Error::unavailable(format!(
            "this Executor was made with {what} by a parent of this process before it forked, and a fork copies no \
             threads or streams, so it cannot run here: make a new executor in this process (or load the model \
             again naming none, which makes this process's default executor)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, ExecutorForRamConfig};

    fn ram(threads: u32) -> Executor {
        Executor::for_ram(ExecutorForRamConfig { threads: Some(threads), ..Default::default() }).unwrap()
    }

    /// What the child checks, as its exit code: 0 when a two-thread executor fails fast naming the fork, frees
    /// without joining, and a one-thread executor and a new two-thread one run.
    fn in_the_child(two: Executor, one: &Executor) -> i32 {
        match two.for_n(4, |_| {}) {
            Err(e) if e.kind() == ErrorKind::Unavailable && e.message().contains("fork") => {}
            _ => return 2,
        }
        if two.drain(crate::Mood::Parked).is_ok() || two.free().is_err() {
            return 3;
        }
        drop(two); // forgets the parent's worker
        if one.for_n(4, |_| {}).is_err() || ram(2).for_n(4, |_| {}).is_err() {
            return 4;
        }
        0
    }

    #[test]
    fn a_two_thread_executor_fails_fast_in_a_forked_child_and_a_one_thread_one_works() {
        let (two, one) = (ram(2), ram(1));
        two.for_n(4, |_| {}).unwrap();
        // SAFETY: the child runs only `in_the_child` (which neither prints nor takes a lock another thread of
        // this test process could hold: the executors are this test's own) and leaves with `_exit`, never
        // returning into the test harness.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| in_the_child(two.clone(), &one)));
            // SAFETY: `_exit` ends the child at once, running no destructor or exit handler of the parent's copy.
            unsafe { libc::_exit(code.unwrap_or(5)) };
        }
        assert!(pid > 0, "fork failed");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut status = 0;
        // SAFETY: `waitpid` on our own child with a valid out-pointer.
        while unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == 0 {
            if std::time::Instant::now() > deadline {
                // SAFETY: signals and reaps our own child.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                panic!("the forked child hangs");
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(libc::WIFEXITED(status), "the child died: status {status}");
        assert_eq!(libc::WEXITSTATUS(status), 0, "the child's check failed");
        two.for_n(4, |_| {}).unwrap(); // the parent's executor is untouched
        two.free().unwrap();
        one.free().unwrap();
    }
}
