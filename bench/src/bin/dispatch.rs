//! Dispatch latency and idle cost of the UForm executor against ForkUnion and Rayon, side by side, 2 threads each.
//!
//! `cargo run --release -p uform-bench --bin dispatch`
//!
//! Each dispatch runs N tiny tasks, each a relaxed atomic add on its own 128-byte cache line. Rows:
//! - `uform spinning`: back-to-back dispatches, workers in the `Spinning` mood;
//! - `uform parked`: workers in the `Parked` mood, every dispatch after at least 1 ms of idleness (so they sleep);
//! - `forkunion`: the `forkunion` 3.x crate, default busy-waiting pool, `for_n`, back to back;
//! - `rayon`: a 2-thread Rayon pool, `install` + `into_par_iter().for_each`, back to back;
//! - `rayon after idle`: the same pool, every dispatch after the parked row's idle time (its workers asleep too).
//!   Its idle CPU column repeats `rayon`'s;
//! - `uform alone`: an executor of 1 thread, every task on the caller: the floor of a dispatch that wakes nobody,
//!   which is what the parked row is whenever a wake costs more than it saves (`parked/alone@N`).
//!
//! The summary line gives, at every N, the medians' ratios `spinning/forkunion@N`, `parked/rayon@N` (Rayon back to
//! back), `parked/rayon_idle@N` (Rayon after the same idle time) and `parked/alone@N`, and the tail
//! `spinning_p90/forkunion_p90@N`.
//!
//! Idle CPU: `getrusage(RUSAGE_SELF)` user+system delta while the main thread sleeps one second right after a
//! dispatch, with only the measured pool alive (ForkUnion's pool is dropped before anything else is measured,
//! since it burns a core while idle).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};
use uform_core::{Executor, ExecutorForRamConfig, Mood};

const THREADS: usize = 2;
const SIZES: [usize; 3] = [2, 64, 4096];
const BACK_TO_BACK: usize = 20_000;
const AFTER_IDLE: usize = 400;

#[repr(align(128))]
struct Line(AtomicU64);

struct Row {
    name: &'static str,
    stats: Vec<(u64, u64)>, // (median, p90) per size
    idle_cpu_ms: f64,
}

fn percentile(samples: &mut [u64], p: f64) -> u64 {
    samples.sort_unstable();
    samples[((samples.len() - 1) as f64 * p) as usize]
}

/// Times `count` dispatches of `n` tasks; `before` runs untimed before each one.
fn measure(count: usize, mut before: impl FnMut(), mut dispatch: impl FnMut()) -> (u64, u64) {
    for _ in 0..count.min(200) {
        dispatch();
    }
    let mut samples = Vec::with_capacity(count);
    for _ in 0..count {
        before();
        let start = Instant::now();
        dispatch();
        samples.push(start.elapsed().as_nanos() as u64);
    }
    (percentile(&mut samples, 0.5), percentile(&mut samples, 0.9))
}

fn cpu_time() -> Duration {
    // SAFETY: getrusage fills the zeroed struct.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// CPU time the process burns while the main thread sleeps one second, right after `touch` ran.
fn idle_cpu_ms(touch: impl FnOnce()) -> f64 {
    touch();
    let before = cpu_time();
    std::thread::sleep(Duration::from_secs(1));
    (cpu_time() - before).as_secs_f64() * 1e3
}

fn main() {
    let lines: Vec<Line> = (0..4096).map(|_| Line(AtomicU64::new(0))).collect();
    let task = |i: usize| {
        lines[i].0.fetch_add(1, Relaxed);
    };
    let mut rows = Vec::new();

    // ForkUnion first, then dropped: its idle workers spin.
    {
        let topology = forkunion::Topology::new().expect("forkunion topology");
        let mut pool = forkunion::spawn(&topology, THREADS);
        let stats = SIZES
            .iter()
            .map(|&n| {
                measure(
                    BACK_TO_BACK,
                    || {},
                    || {
                        pool.for_n(n, |prong| task(prong.task_index));
                    },
                )
            })
            .collect();
        let idle = idle_cpu_ms(|| {
            pool.for_n(2, |prong| task(prong.task_index));
        });
        rows.push(Row { name: "forkunion", stats, idle_cpu_ms: idle });
    }

    {
        let config = ExecutorForRamConfig { threads: Some(THREADS as u32), ..Default::default() };
        let executor = Executor::for_ram(config).expect("executor");
        executor.drain(Mood::Spinning).unwrap();
        let stats = SIZES.iter().map(|&n| measure(BACK_TO_BACK, || {}, || executor.for_n(n, task).unwrap())).collect();
        let idle = idle_cpu_ms(|| executor.for_n(2, task).unwrap());
        rows.push(Row { name: "uform spinning", stats, idle_cpu_ms: idle });

        executor.drain(Mood::Parked).unwrap();
        let stats = SIZES
            .iter()
            .map(|&n| {
                measure(
                    AFTER_IDLE,
                    || std::thread::sleep(Duration::from_micros(1100)),
                    || executor.for_n(n, task).unwrap(),
                )
            })
            .collect();
        let idle = idle_cpu_ms(|| executor.for_n(2, task).unwrap());
        rows.push(Row { name: "uform parked", stats, idle_cpu_ms: idle });
        executor.free().unwrap();

        let config = ExecutorForRamConfig { threads: Some(1), ..Default::default() };
        let alone = Executor::for_ram(config).expect("executor of one thread");
        let stats = SIZES.iter().map(|&n| measure(BACK_TO_BACK, || {}, || alone.for_n(n, task).unwrap())).collect();
        let idle = idle_cpu_ms(|| alone.for_n(2, task).unwrap());
        rows.push(Row { name: "uform alone", stats, idle_cpu_ms: idle });
        alone.free().unwrap();
    }

    {
        use rayon::prelude::*;
        let pool = rayon::ThreadPoolBuilder::new().num_threads(THREADS).build().expect("rayon pool");
        let dispatch = |n: usize| pool.install(|| (0..n).into_par_iter().for_each(task));
        let stats = SIZES.iter().map(|&n| measure(BACK_TO_BACK, || {}, || dispatch(n))).collect();
        let idle = idle_cpu_ms(|| dispatch(2));
        rows.push(Row { name: "rayon", stats, idle_cpu_ms: idle });
        // The same idle time before each dispatch as the parked row: Rayon's workers have gone to sleep too.
        let stats = SIZES
            .iter()
            .map(|&n| measure(AFTER_IDLE, || std::thread::sleep(Duration::from_micros(1100)), || dispatch(n)))
            .collect();
        rows.push(Row { name: "rayon after idle", stats, idle_cpu_ms: idle });
    }

    println!("threads: {THREADS}; ns per for_n dispatch of N relaxed atomic adds, each on its own cache line");
    print!("{:<16}", "pool");
    for n in SIZES {
        print!(" {:>18}", format!("N={n} median/p90"));
    }
    println!(" {:>14}", "idle CPU ms/s");
    for row in &rows {
        print!("{:<16}", row.name);
        for (median, p90) in &row.stats {
            print!(" {:>18}", format!("{median}/{p90}"));
        }
        println!(" {:>14.3}", row.idle_cpu_ms);
    }
    let find = |name: &str| rows.iter().find(|r| r.name == name).unwrap();
    let ratio = |a: &str, b: &str, i: usize| find(a).stats[i].0 as f64 / find(b).stats[i].0 as f64;
    let at = |i: usize| SIZES[i];
    // Spinning against ForkUnion at every N, with each one's p90 against ForkUnion's (the tail); parked against
    // back-to-back Rayon and against Rayon after the same idle time, at every N.
    let spinning: Vec<String> = (0..SIZES.len())
        .map(|i| format!("spinning/forkunion@{}={:.2}", at(i), ratio("uform spinning", "forkunion", i)))
        .collect();
    let tails: Vec<String> = (0..SIZES.len())
        .map(|i| {
            let p90 = find("uform spinning").stats[i].1 as f64 / find("forkunion").stats[i].1 as f64;
            format!("spinning_p90/forkunion_p90@{}={p90:.2}", at(i))
        })
        .collect();
    let parked: Vec<String> =
        (0..SIZES.len()).map(|i| format!("parked/rayon@{}={:.2}", at(i), ratio("uform parked", "rayon", i))).collect();
    let after_idle: Vec<String> = (0..SIZES.len())
        .map(|i| format!("parked/rayon_idle@{}={:.2}", at(i), ratio("uform parked", "rayon after idle", i)))
        .collect();
    let alone: Vec<String> = (0..SIZES.len())
        .map(|i| format!("parked/alone@{}={:.2}", at(i), ratio("uform parked", "uform alone", i)))
        .collect();
    let total: u64 = lines.iter().map(|l| l.0.load(Relaxed)).sum();
    assert!(total > 0);
    println!(
        "dispatch: {} {} {} {} {} parked_idle_cpu_ms={:.3}",
        spinning.join(" "),
        parked.join(" "),
        after_idle.join(" "),
        alone.join(" "),
        tails.join(" "),
        find("uform parked").idle_cpu_ms
    );
}
