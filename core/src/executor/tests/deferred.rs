//! Deferred calls and `drain`: a drain waits for everything submitted before it (whatever order it finishes in),
//! calls run on the workers without one, the limit holds submitters back, and a panic is reported once.

use super::*;

#[test]
fn drain_waits_for_deferred_work() {
    for threads in [1, 2] {
        let e = ram(threads);
        let done = Arc::new(AtomicUsize::new(0));
        for _ in 0..50 {
            let done = done.clone();
            e.submit(move || {
                std::thread::sleep(Duration::from_micros(200));
                done.fetch_add(1, SeqCst);
            })
            .unwrap();
        }
        e.drain(Mood::Parked).unwrap();
        assert_eq!(done.load(SeqCst), 50);
        e.free().unwrap();
    }
}

#[test]
fn drain_waits_for_what_came_before_it_even_when_later_work_finishes_first() {
    // Calls complete out of order: a binding's asynchronous `encodeText` holds one verb from the moment it returns its
    // promise, and the run it hands to another thread enters a second one. That second verb (or a deferred call
    // submitted by another thread) can begin after a `drain` and end before the first: the drain must still wait.
    let e = ram(2);
    let older = e.verb_in_flight();
    let drained = Arc::new(AtomicBool::new(false));
    let drainer = {
        let (e, drained) = (e.clone(), drained.clone());
        std::thread::spawn(move || {
            e.drain(Mood::Parked).unwrap();
            drained.store(true, SeqCst);
        })
    };
    std::thread::sleep(Duration::from_millis(30)); // the drain is waiting
    drop(e.verb_in_flight()); // a verb that began after the drain ends first
    e.submit(|| {}).unwrap(); // and so does a deferred call
    std::thread::sleep(Duration::from_millis(50));
    assert!(!drained.load(SeqCst), "a drain returned while a verb older than it was still in flight");
    drop(older);
    drainer.join().unwrap();
    assert!(drained.load(SeqCst));
    e.drain(Mood::Parked).unwrap();
    e.free().unwrap();
}

#[test]
fn deferred_calls_run_on_workers_without_a_drain() {
    let e = ram(2);
    let ran_on = Arc::new(Mutex::new(None));
    let r = ran_on.clone();
    e.submit(move || *r.lock().unwrap() = std::thread::current().name().map(str::to_string)).unwrap();
    eventually("the deferred call", || ran_on.lock().unwrap().is_some());
    assert_eq!(ran_on.lock().unwrap().as_deref(), Some("uform-exec-1"));
}

#[test]
fn deferred_limit_applies_backpressure() {
    let e = Executor::for_ram(ExecutorForRamConfig { threads: Some(2), deferred_limit: Some(2), ..Default::default() })
        .unwrap();
    let gate = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicUsize::new(0));
    for _ in 0..2 {
        let (gate, started) = (gate.clone(), started.clone());
        e.submit(move || {
            started.fetch_add(1, SeqCst);
            while !gate.load(SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
        })
        .unwrap();
    }
    // A third submission waits for a slot.
    let submitted = Arc::new(AtomicBool::new(false));
    let submitter = {
        let (e, submitted) = (e.clone(), submitted.clone());
        std::thread::spawn(move || {
            e.submit(|| {}).unwrap();
            submitted.store(true, SeqCst);
        })
    };
    eventually("the first call to start", || started.load(SeqCst) >= 1);
    std::thread::sleep(Duration::from_millis(50));
    assert!(!submitted.load(SeqCst), "the third submission must wait while two calls are in flight");
    gate.store(true, SeqCst);
    submitter.join().unwrap();
    assert!(submitted.load(SeqCst));
    e.drain(Mood::Parked).unwrap();
    assert_eq!(started.load(SeqCst), 2);
}

#[test]
fn a_panicking_deferred_call_is_reported_by_the_next_drain() {
    let e = ram(2);
    e.submit(|| panic!("deferred boom")).unwrap();
    let ok = Arc::new(AtomicBool::new(false));
    let o = ok.clone();
    e.submit(move || o.store(true, SeqCst)).unwrap();
    let err = e.drain(Mood::Parked).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Internal);
    assert!(err.message().contains("deferred boom") && err.message().contains("1 deferred call"), "{}", err.message());
    assert!(ok.load(SeqCst), "the worker survived the panic");
    e.drain(Mood::Parked).unwrap();
    e.for_n(10, |_| {}).unwrap();
}
