//! Executor tests. Robust on a loaded two-core machine: no timing assertions beyond generous liveness bounds.

use super::*;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

mod deferred;

fn ram(threads: u32) -> Executor {
    Executor::for_ram(ExecutorForRamConfig { threads: Some(threads), ..Default::default() }).unwrap()
}

fn kind_and_message(result: Result<Executor>) -> (ErrorKind, String) {
    let e = result.unwrap_err();
    (e.kind(), e.message().to_string())
}

/// Waits up to a generous bound for `condition`.
fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn for_ram_config_errors() {
    let zero_threads = ExecutorForRamConfig { threads: Some(0), ..Default::default() };
    assert_eq!(
        kind_and_message(Executor::for_ram(zero_threads)),
        (ErrorKind::InvalidArgument, "`config.threads` must be at least 1, got 0".to_string())
    );
    // The largest count a caller can pass fails before anything is allocated per thread.
    let too_many = ExecutorForRamConfig { threads: Some(u32::MAX), ..Default::default() };
    assert_eq!(
        kind_and_message(Executor::for_ram(too_many)),
        (ErrorKind::InvalidArgument, "`config.threads` must be at most 65536, got 4294967295".to_string())
    );
    let zero_limit = ExecutorForRamConfig { deferred_limit: Some(0), ..Default::default() };
    assert_eq!(
        kind_and_message(Executor::for_ram(zero_limit)),
        (ErrorKind::InvalidArgument, "`config.deferred_limit` must be at least 1, got 0".to_string())
    );
    let (kind, message) = kind_and_message(Executor::for_ram(ExecutorForRamConfig {
        memory_domains: Some(vec![4096]),
        ..Default::default()
    }));
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(
        message.contains("`config.memory_domains`") && message.contains("4096") && message.contains("known: 0"),
        "{message}"
    );
    let (kind, message) = kind_and_message(Executor::for_ram(ExecutorForRamConfig {
        memory_domains: Some(vec![0, 0]),
        ..Default::default()
    }));
    assert_eq!(kind, ErrorKind::InvalidArgument, "{message}");
    let (kind, _) = kind_and_message(Executor::for_ram(ExecutorForRamConfig {
        memory_domains: Some(vec![]),
        ..Default::default()
    }));
    assert_eq!(kind, ErrorKind::InvalidArgument);
    let (kind, message) = kind_and_message(Executor::for_ram(ExecutorForRamConfig {
        cpu_class: Some("no-such-cpu".into()),
        ..Default::default()
    }));
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(message.contains("`config.cpu_class`") && message.contains("no-such-cpu"), "{message}");
    #[cfg(target_arch = "x86_64")]
    {
        let arm = ExecutorForRamConfig { cpu_class: Some("arm-neon".into()), ..Default::default() };
        assert_eq!(kind_and_message(Executor::for_ram(arm)).0, ErrorKind::Unsupported);
    }
}

#[test]
fn valid_placement_and_cpu_class() {
    let own = crate::capabilities::capabilities_available();
    let class = own.split(',').next().unwrap().to_string();
    let config = ExecutorForRamConfig { memory_domains: Some(vec![0]), threads: Some(2), ..Default::default() };
    let e = Executor::for_ram(ExecutorForRamConfig { cpu_class: Some(class.clone()), ..config }).unwrap();
    assert_eq!(e.threads(), 2);
    assert_eq!(e.cpu_class(), Some(crate::capabilities::validate_cpu_class("config.cpu_class", &class).unwrap()));
    assert_eq!(e.devices().unwrap(), Vec::new());
    assert!(e.stream_addresses().is_empty());
    e.free().unwrap();
}

#[test]
fn default_thread_count_is_seven_eighths_of_the_cores() {
    let cores: usize = placement::machine().nodes.iter().map(|n| n.cores.len()).sum();
    let e = Executor::for_ram(ExecutorForRamConfig::default()).unwrap();
    assert_eq!(e.threads(), ((cores * 7 + 4) / 8).max(1));
    if cores <= 4 {
        assert_eq!(e.threads(), cores, "up to 4 cores, 7/8 rounds to every core");
    }
    assert_eq!(e.mood(), Mood::Parked);
    e.free().unwrap();
}

#[test]
fn pinning_is_read_back_from_the_os() {
    let e = ram(3);
    let pinned = e.pinned_cpus();
    assert_eq!(pinned.len(), 3);
    assert_eq!(pinned[0], None, "the calling thread is never pinned");
    let plan = placement::plan("config.memory_domains", None).unwrap();
    for (index, cpus) in pinned.iter().enumerate().skip(1) {
        match cpus {
            Some(cpus) => assert_eq!(cpus.as_slice(), plan.core_of(index), "worker {index}"),
            None => assert!(e.pinning_fallback().is_some(), "an unpinned worker must say why"),
        }
    }
    // Each worker, asked through `for_threads`, reports the same affinity again.
    let seen: Vec<Mutex<Vec<usize>>> = (0..3).map(|_| Mutex::new(Vec::new())).collect();
    e.for_threads(|t| *seen[t].lock().unwrap() = current_affinity()).unwrap();
    for (index, cpus) in pinned.iter().enumerate().skip(1) {
        if let Some(cpus) = cpus {
            assert_eq!(&*seen[index].lock().unwrap(), cpus);
        }
    }
}

#[test]
fn verbs_cover_every_index_exactly_once() {
    for threads in [1, 2, 3, 5] {
        let e = ram(threads);
        for mood in [Mood::Parked, Mood::Spinning] {
            e.drain(mood).unwrap();
            for n in [0usize, 1, 2, 3, 7, 64, 1000, 4097] {
                let hits: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
                e.for_n(n, |i| {
                    hits[i].fetch_add(1, SeqCst);
                })
                .unwrap();
                assert!(hits.iter().all(|h| h.load(SeqCst) == 1), "for_n n={n} threads={threads}");
                e.for_n_dynamic(n, |i| {
                    hits[i].fetch_add(1, SeqCst);
                })
                .unwrap();
                assert!(hits.iter().all(|h| h.load(SeqCst) == 2), "for_n_dynamic n={n} threads={threads}");
                let calls = AtomicUsize::new(0);
                e.for_slices(n, |range| {
                    calls.fetch_add(1, SeqCst);
                    assert!(!range.is_empty());
                    for i in range {
                        hits[i].fetch_add(1, SeqCst);
                    }
                })
                .unwrap();
                assert!(hits.iter().all(|h| h.load(SeqCst) == 3), "for_slices n={n} threads={threads}");
                assert!(calls.load(SeqCst) <= threads as usize);
            }
            let per_thread: Vec<AtomicU32> = (0..threads).map(|_| AtomicU32::new(0)).collect();
            let names: Vec<Mutex<Option<String>>> = (0..threads).map(|_| Mutex::new(None)).collect();
            e.for_threads(|t| {
                per_thread[t].fetch_add(1, SeqCst);
                *names[t].lock().unwrap() = std::thread::current().name().map(str::to_string);
            })
            .unwrap();
            assert!(per_thread.iter().all(|h| h.load(SeqCst) == 1));
            for (t, name) in names.iter().enumerate().skip(1) {
                assert_eq!(name.lock().unwrap().as_deref(), Some(format!("uform-exec-{t}").as_str()));
            }
        }
        e.free().unwrap();
    }
}

#[test]
fn verbs_borrow_from_the_stack_and_nest() {
    let e = ram(2);
    let mut data = vec![0u64; 1000];
    {
        let cells: Vec<AtomicU64Wrapper> = data.iter().map(|_| AtomicU64Wrapper::default()).collect();
        e.for_n(1000, |i| cells[i].0.store(i as u64 * 2, SeqCst)).unwrap();
        for (d, c) in data.iter_mut().zip(&cells) {
            *d = c.0.load(SeqCst);
        }
    }
    assert_eq!(data[999], 1998);
    // A verb called from inside a task of the same executor runs inline instead of deadlocking.
    let total = AtomicUsize::new(0);
    e.for_n(4, |_| {
        e.for_n(10, |_| {
            total.fetch_add(1, SeqCst);
        })
        .unwrap();
    })
    .unwrap();
    assert_eq!(total.load(SeqCst), 40);
}

#[derive(Default)]
struct AtomicU64Wrapper(std::sync::atomic::AtomicU64);

#[test]
fn a_panicking_task_is_an_internal_error_and_the_pool_stays_usable() {
    let e = ram(2);
    for _ in 0..20 {
        let err = e.for_n(8, |i| assert!(i != 5, "task five fails")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Internal);
        assert!(err.message().contains("task five fails"), "{}", err.message());
        let err = e.for_threads(|t| assert!(t != 1, "thread one fails")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Internal);
        let err = e.for_n_dynamic(100, |i| assert!(i % 17 != 3)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Internal);
    }
    let count = AtomicUsize::new(0);
    e.for_n(100, |_| {
        count.fetch_add(1, SeqCst);
    })
    .unwrap();
    assert_eq!(count.load(SeqCst), 100);
    e.free().unwrap();
}

#[test]
fn free_is_idempotent_and_later_calls_fail() {
    let e = ram(2);
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    e.submit(move || {
        std::thread::sleep(Duration::from_millis(20));
        r.store(true, SeqCst)
    })
    .unwrap();
    e.free().unwrap();
    assert!(ran.load(SeqCst), "free runs what is pending");
    e.free().unwrap();
    let freed = |r: Result<()>, method: &str| {
        let err = r.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::FreedHandle);
        assert_eq!(err, Error::freed("Executor", method));
    };
    freed(e.drain(Mood::Parked), "drain");
    freed(e.submit(|| {}), "submit");
    freed(e.for_n(4, |_| {}), "for_n");
    freed(e.for_n_dynamic(4, |_| {}), "for_n_dynamic");
    freed(e.for_slices(4, |_| {}), "for_slices");
    freed(e.for_threads(|_| {}), "for_threads");
    assert_eq!(e.devices().unwrap_err(), Error::freed("Executor", "devices"));
}

#[test]
fn free_while_borrowed_is_in_use() {
    let e = ram(2);
    e.lifecycle().borrow("Executor", "bootstrap").unwrap();
    assert_eq!(e.free().unwrap_err().kind(), ErrorKind::InUse);
    e.for_n(3, |_| {}).unwrap();
    e.lifecycle().release();
    e.free().unwrap();
}

#[test]
fn free_and_drain_from_a_worker_do_not_deadlock() {
    let e = ram(2);
    let results = Arc::new(Mutex::new(Vec::new()));
    let (inner, r) = (e.clone(), results.clone());
    e.submit(move || {
        let mut r = r.lock().unwrap();
        r.push(inner.free().map_err(|e| e.kind()));
        r.push(inner.drain(Mood::Parked).map_err(|e| e.kind()));
    })
    .unwrap();
    e.drain(Mood::Parked).unwrap();
    assert_eq!(*results.lock().unwrap(), vec![Err(ErrorKind::InUse), Err(ErrorKind::InUse)]);
    let kinds = Mutex::new(Vec::new());
    e.for_threads(|_| kinds.lock().unwrap().push(e.free().unwrap_err().kind())).unwrap();
    assert!(kinds.into_inner().unwrap().iter().all(|k| *k == ErrorKind::InUse));
    e.free().unwrap();
}

#[test]
fn dropping_the_last_handle_inside_a_deferred_call_does_not_hang() {
    let e = ram(2);
    let clone = e.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    e.submit(move || {
        drop(clone);
        tx.send(()).unwrap();
    })
    .unwrap();
    drop(e);
    rx.recv_timeout(Duration::from_secs(30)).unwrap();
}

#[test]
fn moods_switch_both_ways() {
    let e = ram(2);
    for _ in 0..5 {
        e.drain(Mood::Spinning).unwrap();
        assert_eq!(e.mood(), Mood::Spinning);
        e.for_n(100, |_| {}).unwrap();
        e.drain(Mood::Parked).unwrap();
        assert_eq!(e.mood(), Mood::Parked);
        std::thread::sleep(Duration::from_millis(2));
        e.for_n(100, |_| {}).unwrap();
    }
}

#[test]
fn concurrent_dispatchers_share_the_executor() {
    let e = ram(2);
    let total = Arc::new(AtomicUsize::new(0));
    let callers: Vec<_> = (0..3)
        .map(|_| {
            let (e, total) = (e.clone(), total.clone());
            std::thread::spawn(move || {
                for _ in 0..200 {
                    e.for_n(10, |_| {
                        total.fetch_add(1, SeqCst);
                    })
                    .unwrap();
                }
            })
        })
        .collect();
    callers.into_iter().for_each(|c| c.join().unwrap());
    assert_eq!(total.load(SeqCst), 3 * 200 * 10);
}

fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task").map(|d| d.count()).unwrap_or(0)
}

fn rss_kib() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[test]
fn ten_thousand_create_free_cycles_leak_no_threads_or_memory() {
    // Other tests run concurrently in this process, so thread counts are compared with slack for them.
    let warm = ram(2);
    warm.for_n(10, |_| {}).unwrap();
    warm.free().unwrap();
    let (threads_before, rss_before) = (thread_count(), rss_kib());
    for i in 0..10_000 {
        let e = ram(2);
        if i % 2 == 0 {
            e.for_n(4, |_| {}).unwrap();
            e.free().unwrap();
        } else {
            drop(e); // dropping the last handle also joins
        }
    }
    let (threads_after, rss_after) = (thread_count(), rss_kib());
    assert!(threads_after <= threads_before + 16, "threads {threads_before} -> {threads_after}");
    assert!(rss_after <= rss_before + 32 * 1024, "VmRSS {rss_before} KiB -> {rss_after} KiB");
}

#[test]
fn on_pool_validates_then_is_unsupported() {
    let zero = ExecutorOnPoolConfig { deferred_limit: Some(0), ..Default::default() };
    assert_eq!(kind_and_message(Executor::on_pool(0x1000, zero)).0, ErrorKind::InvalidArgument);
    let node = ExecutorOnPoolConfig { memory_domains: Some(vec![999]), ..Default::default() };
    assert_eq!(kind_and_message(Executor::on_pool(0x1000, node)).0, ErrorKind::InvalidArgument);
    let class = ExecutorOnPoolConfig { cpu_class: Some("nope".into()), ..Default::default() };
    assert_eq!(kind_and_message(Executor::on_pool(0x1000, class)).0, ErrorKind::InvalidArgument);
    assert_eq!(
        kind_and_message(Executor::on_pool(0xdead_beef, ExecutorOnPoolConfig::default())),
        (
            ErrorKind::Unsupported,
            "`on_pool` cannot borrow ForkUnion pool 0xdeadbeef: borrowing a ForkUnion pool is not designed yet"
                .to_string()
        )
    );
}

#[test]
fn for_vram_errors_without_a_gpu() {
    let vram = |config: ExecutorForVramConfig| kind_and_message(Executor::for_vram(config));
    let (kind, message) = vram(ExecutorForVramConfig { deferred_limit: Some(0), ..Default::default() });
    assert_eq!(
        (kind, message.as_str()),
        (ErrorKind::InvalidArgument, "`config.deferred_limit` must be at least 1, got 0")
    );
    let (kind, message) = vram(ExecutorForVramConfig { scratch_limit: Some(0), ..Default::default() });
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(message.contains("`config.scratch_limit`"), "{message}");
    let (kind, message) =
        vram(ExecutorForVramConfig { devices: Some(vec![0, 1]), streams: Some(vec![0x10]), ..Default::default() });
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(message.contains("1 stream") && message.contains("2 devices"), "{message}");
    let (kind, message) = vram(ExecutorForVramConfig { streams: Some(vec![1, 2]), ..Default::default() });
    assert_eq!(kind, ErrorKind::InvalidArgument, "{message}");
    // Special handles and one stream for two devices are refused before the device list is read.
    for (address, name) in [(0, "NULL"), (1, "CU_STREAM_LEGACY"), (2, "CU_STREAM_PER_THREAD")] {
        let (kind, message) = vram(ExecutorForVramConfig { streams: Some(vec![address]), ..Default::default() });
        assert_eq!(kind, ErrorKind::InvalidArgument, "{message}");
        assert!(message.starts_with("`config.streams` holds") && message.contains(name), "{message}");
    }
    let (kind, message) = vram(ExecutorForVramConfig {
        devices: Some(vec![0, 1]),
        streams: Some(vec![0xbeef00, 0xbeef00]),
        ..Default::default()
    });
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(message.contains("0xbeef00 at positions 0 and 1"), "{message}");
    let (kind, message) = vram(ExecutorForVramConfig { devices: Some(vec![1, 1]), ..Default::default() });
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(message.contains("ordinal 1 twice"), "{message}");
    assert_eq!(
        vram(ExecutorForVramConfig { devices: Some(vec![]), ..Default::default() }).0,
        ErrorKind::InvalidArgument
    );
    let (kind, message) = vram(ExecutorForVramConfig { gpu_class: Some("no-such-gpu".into()), ..Default::default() });
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(message.contains("`config.gpu_class`"), "{message}");
    assert_eq!(
        vram(ExecutorForVramConfig { memory_domains: Some(vec![77]), ..Default::default() }).0,
        ErrorKind::InvalidArgument
    );
    let listed = crate::devices::gpu_devices();
    if listed.is_empty() {
        let (kind, message) = vram(ExecutorForVramConfig::default());
        assert_eq!(kind, ErrorKind::Unavailable);
        let why = crate::devices::no_gpu_reason().expect("a reason whenever the list is empty");
        assert_eq!(message, format!("`for_vram` found no GPU: `gpu_devices()` lists none ({why})"));
        assert_eq!(
            vram(ExecutorForVramConfig { devices: Some(vec![3]), ..Default::default() }).0,
            ErrorKind::Unavailable
        );
    } else {
        let ordinal = listed.len() as u32;
        let (kind, message) = vram(ExecutorForVramConfig { devices: Some(vec![ordinal]), ..Default::default() });
        assert_eq!(kind, ErrorKind::InvalidArgument);
        assert!(
            message.contains(&format!("ordinal {ordinal}")) && message.contains(&format!("lists {ordinal}")),
            "{message}"
        );
    }
}

/// Dispatches to parked workers: tiny work finishes on the caller, long work wakes the workers late; either way
/// every index runs exactly once (the late-wake path leaves slices to workers, then steals what is left).
#[test]
fn dispatches_to_parked_workers_cover_every_index_once() {
    for threads in [2u32, 3] {
        let executor =
            Executor::for_ram(ExecutorForRamConfig { threads: Some(threads), ..Default::default() }).unwrap();
        for (n, task) in [(2usize, Duration::ZERO), (5, Duration::from_micros(300)), (4096, Duration::ZERO)] {
            for verb in 0..2 {
                std::thread::sleep(Duration::from_millis(3)); // longer than PARK_AFTER: the workers sleep
                let hits: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
                let work = |i: usize| {
                    if !task.is_zero() {
                        std::thread::sleep(task);
                    }
                    hits[i].fetch_add(1, SeqCst);
                };
                if verb == 0 {
                    executor.for_n(n, work).unwrap();
                } else {
                    executor.for_n_dynamic(n, work).unwrap();
                }
                assert!(hits.iter().all(|h| h.load(SeqCst) == 1), "threads {threads}, n {n}, verb {verb}");
            }
        }
        executor.free().unwrap();
    }
}

/// Work far longer than any wake (16 tasks of 10 ms) is shared in either mood: spinning workers join at once, and
/// sleeping ones are woken once the caller alone would take longer than a wake costs (they take tasks from the
/// shared counter while the caller is still busy); every index still runs once.
#[test]
fn work_that_outlasts_a_wake_is_shared_in_either_mood() {
    let executor = ram(2);
    for mood in [Mood::Spinning, Mood::Parked] {
        executor.drain(mood).unwrap();
        std::thread::sleep(Duration::from_millis(3)); // longer than PARK_AFTER: parked workers sleep
        let caller = std::thread::current().id();
        let by_workers = AtomicUsize::new(0);
        let hits: Vec<AtomicU32> = (0..16).map(|_| AtomicU32::new(0)).collect();
        executor
            .for_n_dynamic(16, |i| {
                std::thread::sleep(Duration::from_millis(10));
                if std::thread::current().id() != caller {
                    by_workers.fetch_add(1, SeqCst);
                }
                hits[i].fetch_add(1, SeqCst);
            })
            .unwrap();
        assert!(hits.iter().all(|h| h.load(SeqCst) == 1), "{mood:?}");
        assert!(by_workers.load(SeqCst) > 0, "{mood:?}: the caller ran all 16 tasks of 10 ms alone");
    }
    executor.free().unwrap();
}

/// A spinning worker that entered in time keeps its own slice: the caller, done with its slice long after the worker
/// came, closes nothing and steals nothing claimed, and slice 1 runs on the worker (what keeps a slice's cache lines
/// on one core from one dispatch to the next). Small dispatches the caller finishes before anyone enters still
/// cover every index once.
#[test]
fn a_worker_that_came_in_time_keeps_its_slice() {
    let executor = ram(2);
    executor.drain(Mood::Spinning).unwrap();
    let caller = std::thread::current().id();
    for _ in 0..3 {
        let on_worker = AtomicU32::new(0);
        executor
            .for_n(2, |i| {
                if i == 0 {
                    std::thread::sleep(Duration::from_millis(50));
                } else if std::thread::current().id() != caller {
                    on_worker.fetch_add(1, SeqCst);
                }
            })
            .unwrap();
        assert_eq!(on_worker.load(SeqCst), 1, "slice 1 ran on the caller");
        for n in [2usize, 3, 64] {
            let hits: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
            executor.for_n(n, |i| _ = hits[i].fetch_add(1, SeqCst)).unwrap();
            assert!(hits.iter().all(|h| h.load(SeqCst) == 1), "n {n}");
        }
    }
    executor.free().unwrap();
}

#[test]
fn the_quiet_word_says_exactly_when_a_drain_would_change_nothing() {
    let e = ram(2);
    let quiet = e.quiet();
    let word = || quiet.word().load(SeqCst);
    let (parked, spinning) = (Executor::drain_quiet_when(Mood::Parked), Executor::drain_quiet_when(Mood::Spinning));
    assert_ne!(parked, spinning);
    assert_eq!(word(), parked, "a new executor is idle and parked");
    e.drain(Mood::Spinning).unwrap();
    assert_eq!(word(), spinning);
    assert_eq!(e.try_drain(Mood::Spinning).map(|r| r.is_ok()), Some(true));

    // A call in flight: neither mood's value, and `try_drain` says it would have to wait.
    let release = Arc::new(AtomicBool::new(false));
    let r = release.clone();
    e.submit(move || {
        while !r.load(SeqCst) {
            std::thread::yield_now();
        }
    })
    .unwrap();
    assert!(word() != parked && word() != spinning, "a call in flight must show in the word before submit returns");
    assert!(e.try_drain(Mood::Spinning).is_none());
    release.store(true, SeqCst);
    e.drain(Mood::Parked).unwrap();
    assert_eq!(word(), parked);

    // A panic awaiting its report keeps the word unsettled until a drain reports it.
    e.submit(|| panic!("quiet boom")).unwrap();
    assert!(e.drain(Mood::Parked).is_err());
    assert_eq!(word(), parked);

    // Concurrent drains with different moods leave the word agreeing with the engine.
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let e = e.clone();
            std::thread::spawn(move || {
                for j in 0..2000 {
                    e.drain(if (i + j) % 2 == 0 { Mood::Parked } else { Mood::Spinning }).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(word(), Executor::drain_quiet_when(e.inner.shared.engine.mood()));

    e.free().unwrap();
    assert!(word() != parked && word() != spinning, "a freed executor's word matches no mood");
    assert!(matches!(e.try_drain(Mood::Parked), Some(Err(ref err)) if err.kind() == ErrorKind::FreedHandle));
    drop(e);
    assert!(word() != parked, "the word outlives the executor while a Quiet holds it");
}
