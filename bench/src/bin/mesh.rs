//! Mesh bootstrap latency: spawns itself as 2, 8 and 32 peer processes meeting in a fresh temporary directory and
//! measures the time from the start of the last process to the moment every process has returned from
//! `Mesh::bootstrap`. Each child reports CLOCK_MONOTONIC (comparable across processes of one host) right after
//! bootstrap returns; the parent reads the clock just before it spawns the last child. The median of several runs.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use uform_core::{Executor, ExecutorForRamConfig, Mesh, MeshOptions};

const RUNS: usize = 7;

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn peer(args: &[String]) {
    let [directory, job, index, count] = args else { panic!("usage: mesh --peer DIR JOB INDEX COUNT") };
    // One thread: the benchmark measures the meeting, not the thread pool; the executor is still made inside the window.
    let executor =
        Executor::for_ram(ExecutorForRamConfig { threads: Some(1), ..Default::default() }).expect("executor");
    let options = MeshOptions {
        host_domain_index: Some(index.parse().unwrap()),
        host_domain_count: Some(count.parse().unwrap()),
        directory: Some(directory.clone()),
        job: Some(job.clone()),
        timeout_seconds: Some(60),
        ..Default::default()
    };
    let mesh = Mesh::bootstrap(&executor, options).unwrap_or_else(|e| panic!("bootstrap: {e}"));
    let returned = monotonic_ns();
    println!("{returned}");
    mesh.free().expect("free");
}

/// One run of `count` processes: milliseconds from spawning the last to the last return from bootstrap.
fn once(directory: &std::path::Path, job: &str, count: u32) -> f64 {
    let exe = std::env::current_exe().unwrap();
    let mut children = Vec::new();
    let mut last_start = 0;
    for index in 0..count {
        last_start = monotonic_ns();
        let child = Command::new(&exe)
            .args(["--peer", directory.to_str().unwrap(), job, &index.to_string(), &count.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn");
        children.push(child);
    }
    let mut latest = 0;
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "a peer failed");
        latest = latest.max(String::from_utf8(out.stdout).unwrap().trim().parse::<u64>().unwrap());
    }
    assert!(!directory.join(job).exists(), "the job directory was left behind");
    latest.saturating_sub(last_start) as f64 / 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--peer") {
        return peer(&args[1..]);
    }
    let directory: PathBuf = std::env::temp_dir().join(format!("uform-mesh-bench-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    println!(
        "{:>9} {:>10} {:>10} {:>10}   (ms from the last spawn to every bootstrap returned, {RUNS} runs)",
        "processes", "median", "min", "max"
    );
    let mut medians = Vec::new();
    for count in [2u32, 8, 32] {
        let mut times: Vec<f64> =
            (0..RUNS).map(|run| once(&directory, &format!("bench-{count}-{run}"), count)).collect();
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let median = times[RUNS / 2];
        println!("{count:>9} {median:>10.2} {:>10.2} {:>10.2}", times[0], times[RUNS - 1]);
        medians.push(median);
    }
    let _ = std::fs::remove_dir_all(&directory);
    println!("mesh: p2_ms={:.2} p8_ms={:.2} p32_ms={:.2}", medians[0], medians[1], medians[2]);
}
