//! The async twins' runtime (`codegen/src/lang/udl/async_twin.rs`): a long call runs on a thread of its own and
//! completes the future from there, so the caller's executor (Swift's cooperative pool, a handful of threads) never
//! has a thread waiting in it, however many long calls are in flight.

use crate::UFormError;

/// Runs the blocking `call` on its own thread, started now; the returned future completes when it returns.
pub fn off_thread<T, F>(call: F) -> impl std::future::Future<Output = Result<T, UFormError>> + Send
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, UFormError> + Send + 'static,
{
    let (sender, receiver) = futures_channel::oneshot::channel();
    let started = std::thread::Builder::new()
        .name("uform-long-call".into())
        .spawn(move || {
            // The receiver is gone when the caller dropped the future (a cancelled task): the result is dropped.
            let _ = sender.send(call());
        })
        .map(drop)
        .map_err(|e| UFormError::Internal(format!("cannot start a thread for the call: {e}")));
    async move {
        started?;
        // The sender is dropped unsent only when `call` unwound; the glue's `guard` turns a panic into an error.
        receiver.await.unwrap_or_else(|_| Err(UFormError::Internal("the call's thread ended without a result".into())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Barrier};

    /// A minimal executor: polls on this thread, parking between polls.
    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        struct Unpark(std::thread::Thread);
        impl std::task::Wake for Unpark {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut context = std::task::Context::from_waker(&waker);
        let mut future = std::pin::pin!(future);
        loop {
            if let std::task::Poll::Ready(value) = future.as_mut().poll(&mut context) {
                return value;
            }
            std::thread::park();
        }
    }

    #[test]
    fn the_call_runs_on_another_thread_and_its_result_and_error_come_back() {
        let caller = std::thread::current().id();
        let ran_on = block_on(off_thread(move || Ok(std::thread::current().id()))).unwrap();
        assert_ne!(ran_on, caller);
        let error: Result<(), _> = block_on(off_thread(|| Err(UFormError::Timeout("late".into()))));
        assert_eq!(error, Err(UFormError::Timeout("late".into())));
    }

    #[test]
    fn four_calls_that_wait_for_each_other_finish_when_polled_from_one_thread() {
        // Each call waits until all four run at once: they finish only if none of them runs on the polling thread.
        let barrier = Arc::new(Barrier::new(4));
        let futures: Vec<_> = (0..4)
            .map(|i| {
                let barrier = barrier.clone();
                off_thread(move || {
                    barrier.wait();
                    Ok(i)
                })
            })
            .collect();
        let mut results = Vec::new();
        for future in futures {
            results.push(block_on(future).unwrap());
        }
        assert_eq!(results, vec![0, 1, 2, 3]);
    }
}
