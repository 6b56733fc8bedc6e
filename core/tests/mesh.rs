//! Meshes of real processes: this test binary re-spawns itself as peers (`mesh_peer_entry` with the role in the
//! environment), and each peer reports what bootstrap, describe and free did through a result file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use uform_core::mesh::{mesh_options_from_environment, mesh_options_from_lookup};
use uform_core::{ErrorKind, Executor, Mesh, MeshOptions};

#[path = "mesh/faults.rs"]
mod faults;
#[path = "mesh/security.rs"]
mod security;

const ROLE: &str = "UFORM_MESH_TEST_ROLE";

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn write_atomically(path: &Path, text: &str) {
    let temporary = path.with_extension("partial");
    std::fs::write(&temporary, text).unwrap();
    std::fs::rename(&temporary, path).unwrap();
}

/// The peer process. In the parent run it does nothing.
#[test]
fn mesh_peer_entry() {
    let Some(role) = env(ROLE) else { return };
    if role == "scenario" {
        // A fault scenario run inside a namespace that `namespaced` set up; it asserts, so a failure is its exit code.
        return faults::scenario(&env("UFORM_MESH_SCENARIO").unwrap());
    }
    let result = PathBuf::from(env("UFORM_MESH_RESULT").unwrap());
    if role == "env" {
        write_atomically(&result, &format!("{:?}", mesh_options_from_environment()));
        return;
    }
    let number = |name: &str| env(name).map(|v| v.parse::<u32>().unwrap());
    let options = MeshOptions {
        host_domain_index: number("UFORM_MESH_INDEX"),
        host_domain_count: number("UFORM_MESH_COUNT"),
        gpus_per_multimem_domain: number("UFORM_MESH_GPD"),
        directory: env("UFORM_MESH_DIR"),
        job: env("UFORM_MESH_JOB"),
        timeout_seconds: number("UFORM_MESH_TIMEOUT"),
        group: env("UFORM_MESH_GROUP"),
    };
    let executor = Executor::for_ram(Default::default()).unwrap();
    // Writes of this process fail past this many bytes (EFBIG, SIGXFSZ ignored), during bootstrap only, so the result
    // file can still be written.
    let file_size_limit = env("UFORM_MESH_FSIZE").map(|limit| limit_file_size(limit.parse().unwrap()));
    let bootstrapped = Mesh::bootstrap(&executor, options);
    if let Some(previous) = file_size_limit {
        // SAFETY: restores the soft limit read before; the hard limit was never lowered.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &previous) }, 0);
    }
    let mut text = match bootstrapped {
        Ok(mesh) => {
            let d = mesh.describe().unwrap();
            let text = format!(
                "ok|{}|{}|{}|{}|{}|{}\n",
                d.host_domain_index,
                d.host_domain_count,
                d.gpus_per_multimem_domain,
                d.multimem_domain_count,
                d.multimem_tier.as_str(),
                d.gpus.len()
            );
            write_atomically(&result, &text);
            if let Some(hold) = env("UFORM_MESH_HOLD") {
                let start = Instant::now();
                while !Path::new(&hold).exists() && start.elapsed() < Duration::from_secs(60) {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            let freed = match mesh.free() {
                Ok(()) => "freed|ok".to_string(),
                Err(e) => format!("freed|err|{}|{}", e.kind().code(), e.message()),
            };
            text + &freed
        }
        Err(e) => format!("err|{}|{}", e.kind().code(), e.message()),
    };
    text.push('\n');
    write_atomically(&result, &text);
}

/// Makes this process's writes fail past `bytes` of any file: lowers the soft RLIMIT_FSIZE and ignores SIGXFSZ, so a
/// write past the limit fails with EFBIG instead of killing the process. Returns the limit to restore.
fn limit_file_size(bytes: u64) -> libc::rlimit {
    let mut previous = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: plain system calls on this process with valid pointers.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut previous), 0);
        let lowered = libc::rlimit { rlim_cur: bytes as libc::rlim_t, rlim_max: previous.rlim_max };
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lowered), 0);
    }
    previous
}

/// A fresh directory for one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "uform-mesh-test-{}-{}-{name}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Scratch(path)
    }
    fn dir(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Peer {
    child: Child,
    result: PathBuf,
}

#[derive(Clone, Default)]
struct Spec {
    index: Option<u32>,
    count: Option<u32>,
    timeout: Option<u32>,
    gpd: Option<u32>,
    hold: Option<PathBuf>,
    /// Bytes past which this peer's writes fail while it bootstraps.
    fsize: Option<u64>,
    /// The `group` option.
    group: Option<String>,
    /// Runs the peer as this user and group (the test must run as root).
    uid: Option<u32>,
}

fn spawn(dir: &Path, job: &str, spec: Spec, results: &Path) -> Peer {
    static N: AtomicUsize = AtomicUsize::new(0);
    let result = results.join(format!("result-{}", N.fetch_add(1, Ordering::Relaxed)));
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "mesh_peer_entry", "--nocapture", "--test-threads=1", "-q"])
        .env(ROLE, "peer")
        .env("UFORM_MESH_RESULT", &result)
        .env("UFORM_MESH_DIR", dir)
        .env("UFORM_MESH_JOB", job)
        .stdout(Stdio::null());
    for (name, value) in [
        ("UFORM_MESH_INDEX", spec.index),
        ("UFORM_MESH_COUNT", spec.count),
        ("UFORM_MESH_TIMEOUT", spec.timeout),
        ("UFORM_MESH_GPD", spec.gpd),
    ] {
        if let Some(v) = value {
            command.env(name, v.to_string());
        }
    }
    if let Some(hold) = &spec.hold {
        command.env("UFORM_MESH_HOLD", hold);
    }
    if let Some(bytes) = spec.fsize {
        command.env("UFORM_MESH_FSIZE", bytes.to_string());
    }
    if let Some(group) = &spec.group {
        command.env("UFORM_MESH_GROUP", group);
    }
    if let Some(uid) = spec.uid {
        std::os::unix::process::CommandExt::uid(std::os::unix::process::CommandExt::gid(&mut command, uid), uid);
    }
    Peer { child: command.spawn().unwrap(), result }
}

fn finish(mut peer: Peer) -> String {
    let status = peer.child.wait().unwrap();
    assert!(status.success(), "peer exited with {status}");
    std::fs::read_to_string(&peer.result).unwrap_or_else(|e| panic!("no result from a peer: {e}"))
}

fn pid(peer: &Peer) -> u32 {
    peer.child.id()
}

/// Spawns `count` peers of `job` and returns their results in index order.
fn run(dir: &Path, results: &Path, job: &str, count: u32, timeout: u32) -> Vec<String> {
    let peers: Vec<Peer> = (0..count)
        .map(|index| {
            spawn(
                dir,
                job,
                Spec { index: Some(index), count: Some(count), timeout: Some(timeout), ..Spec::default() },
                results,
            )
        })
        .collect();
    peers.into_iter().map(finish).collect()
}

fn assert_met(results: &[String], count: u32) {
    for (index, text) in results.iter().enumerate() {
        // index|count|gpd|domains|tier|gpus: a RAM executor joins with no GPUs.
        assert_eq!(text, &format!("ok|{index}|{count}|0|0|peer-read|0\nfreed|ok\n"), "peer {index}");
    }
}

fn entries(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map_or_else(|_| BTreeSet::new(), |d| d.map(|e| e.unwrap().file_name().into_string().unwrap()).collect())
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(30), "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Peers 0 and 1 of a run of two (timeout 30 s) of `job` in `dir`, each holding the mesh until `hold` exists;
/// returned once both have joined.
fn two_holding(dir: &Path, job: &str, hold: &Path, results: &Path) -> [Peer; 2] {
    let spec = |index| Spec {
        index: Some(index),
        count: Some(2),
        timeout: Some(30),
        hold: Some(hold.to_path_buf()),
        ..Spec::default()
    };
    let peers = [0, 1].map(|index| spawn(dir, job, spec(index), results));
    wait_for("both to join", || {
        peers.iter().all(|p| std::fs::read_to_string(&p.result).is_ok_and(|t| t.starts_with("ok|")))
    });
    peers
}

fn kill(mut peer: Peer) {
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(peer.child.id() as libc::pid_t, libc::SIGKILL) };
    peer.child.wait().unwrap();
}

fn members(job: &Path) -> usize {
    entries(job).iter().filter(|n| n.starts_with("member-")).count()
}

#[test]
fn mesh_2_8_and_32_processes_meet_and_leave_nothing() {
    let scratch = Scratch::new("meet");
    let results = Scratch::new("meet-results");
    for count in [2, 8, 32] {
        let job = format!("meet-{count}");
        let outcome = run(scratch.dir(), results.dir(), &job, count, 60);
        assert_met(&outcome, count);
        assert!(
            !scratch.dir().join(&job).exists(),
            "job directory left behind: {:?}",
            entries(&scratch.dir().join(&job))
        );
    }
    assert!(entries(scratch.dir()).is_empty(), "{:?}", entries(scratch.dir()));
}

#[test]
fn mesh_rerun_of_the_same_job_right_after_a_clean_finish() {
    let scratch = Scratch::new("rerun");
    let results = Scratch::new("rerun-results");
    for _ in 0..3 {
        assert_met(&run(scratch.dir(), results.dir(), "again", 3, 30), 3);
        assert!(entries(scratch.dir()).is_empty(), "{:?}", entries(scratch.dir()));
    }
}

#[test]
fn mesh_directory_with_spaces_and_non_ascii() {
    let scratch = Scratch::new("names");
    let dir = scratch.dir().join("with space/ünïcødé 目录");
    std::fs::create_dir_all(&dir).unwrap();
    let results = Scratch::new("names-results");
    assert_met(&run(&dir, results.dir(), "job with ✓ and spaces", 2, 30), 2);
    assert!(entries(&dir).is_empty());
}

#[test]
fn mesh_two_jobs_in_one_directory_at_once() {
    let scratch = Scratch::new("two-jobs");
    let results = Scratch::new("two-jobs-results");
    let spec = |index| Spec { index: Some(index), count: Some(2), timeout: Some(30), ..Spec::default() };
    let peers: Vec<Peer> = ["a", "b", "a", "b"]
        .iter()
        .enumerate()
        .map(|(i, job)| spawn(scratch.dir(), job, spec((i / 2) as u32), results.dir()))
        .collect();
    let outcome: Vec<String> = peers.into_iter().map(finish).collect();
    assert_eq!(outcome[0], "ok|0|2|0|0|peer-read|0\nfreed|ok\n");
    assert_eq!(outcome[1], "ok|0|2|0|0|peer-read|0\nfreed|ok\n");
    assert_eq!(outcome[2], "ok|1|2|0|0|peer-read|0\nfreed|ok\n");
    assert_eq!(outcome[3], "ok|1|2|0|0|peer-read|0\nfreed|ok\n");
    assert!(entries(scratch.dir()).is_empty(), "{:?}", entries(scratch.dir()));
}

#[test]
fn mesh_duplicate_index_is_a_conflict_naming_both() {
    let scratch = Scratch::new("duplicate");
    let results = Scratch::new("duplicate-results");
    let job = scratch.dir().join("dup");
    let spec = |index| Spec { index: Some(index), count: Some(2), timeout: Some(5), ..Spec::default() };
    let first = spawn(scratch.dir(), "dup", spec(0), results.dir());
    wait_for("the first record", || members(&job) == 1);
    let second = spawn(scratch.dir(), "dup", spec(0), results.dir());
    let pids = [pid(&first), pid(&second)];
    let outcome = [finish(first), finish(second)];
    let conflicts: Vec<&String> = outcome.iter().filter(|t| t.starts_with("err|conflict|")).collect();
    assert_eq!(conflicts.len(), 2, "both see the conflict: {outcome:?}");
    for text in conflicts {
        for pid in pids {
            assert!(text.contains(&format!("pid {pid})")), "{text}");
        }
        assert!(text.contains("host domain index 0"), "{text}");
    }
    assert!(!job.exists(), "{:?}", entries(&job));
}

#[test]
fn mesh_count_disagreement_is_a_conflict_naming_the_values() {
    let scratch = Scratch::new("count");
    let results = Scratch::new("count-results");
    let a = spawn(
        scratch.dir(),
        "count",
        Spec { index: Some(0), count: Some(2), timeout: Some(5), ..Spec::default() },
        results.dir(),
    );
    let b = spawn(
        scratch.dir(),
        "count",
        Spec { index: Some(1), count: Some(3), timeout: Some(5), ..Spec::default() },
        results.dir(),
    );
    for text in [finish(a), finish(b)] {
        assert!(text.starts_with("err|conflict|"), "{text}");
        assert!(text.contains("`host_domain_count`") && text.contains("says 2") && text.contains("says 3"), "{text}");
    }
    assert!(entries(scratch.dir()).is_empty(), "{:?}", entries(scratch.dir()));
}

#[test]
fn mesh_gpus_per_domain_disagreement_is_a_conflict() {
    let scratch = Scratch::new("gpd");
    let results = Scratch::new("gpd-results");
    let a = spawn(
        scratch.dir(),
        "gpd",
        Spec { index: Some(0), count: Some(2), timeout: Some(5), gpd: Some(4), ..Spec::default() },
        results.dir(),
    );
    let b = spawn(
        scratch.dir(),
        "gpd",
        Spec { index: Some(1), count: Some(2), timeout: Some(5), gpd: Some(8), ..Spec::default() },
        results.dir(),
    );
    for text in [finish(a), finish(b)] {
        assert!(text.starts_with("err|conflict|") && text.contains("`gpus_per_multimem_domain`"), "{text}");
        assert!(text.contains("has 4") && text.contains("has 8"), "{text}");
    }
    assert!(entries(scratch.dir()).is_empty());
}

#[test]
fn mesh_peer_that_never_comes_times_out_and_leaves_nothing() {
    let scratch = Scratch::new("never");
    let results = Scratch::new("never-results");
    let start = Instant::now();
    let spec = |index| Spec { index: Some(index), count: Some(3), timeout: Some(1), ..Spec::default() };
    let peers =
        [spawn(scratch.dir(), "never", spec(0), results.dir()), spawn(scratch.dir(), "never", spec(1), results.dir())];
    for text in peers.map(finish) {
        assert!(text.starts_with("err|timeout|timed out after 1 s"), "{text}");
        // The peer that times out first takes its record along, so the other may name it missing too.
        assert!(text.contains("2] of 3 never joined"), "{text}");
    }
    assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
    assert!(entries(scratch.dir()).is_empty(), "{:?}", entries(scratch.dir()));
}

#[test]
fn mesh_of_the_largest_count_times_out_on_time_naming_the_range() {
    // A look at the directory costs what the directory holds, never `hostDomainCount`: 4294967295 processes of which
    // one came time out after the 1 s asked for, naming the missing indices as one range.
    let scratch = Scratch::new("largest");
    let executor = Executor::for_ram(Default::default()).unwrap();
    let options = MeshOptions {
        host_domain_index: Some(0),
        host_domain_count: Some(u32::MAX),
        directory: Some(scratch.dir().to_str().unwrap().to_string()),
        job: Some("largest".into()),
        timeout_seconds: Some(1),
        ..Default::default()
    };
    let start = Instant::now();
    let err = Mesh::bootstrap(&executor, options).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(err.message().ends_with("host domain indices [1-4294967294] of 4294967295 never joined"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
    assert!(entries(scratch.dir()).is_empty(), "{:?}", entries(scratch.dir()));
    executor.free().unwrap();
}

#[test]
fn mesh_threads_of_one_process_meet_and_hold_the_executor() {
    let scratch = Scratch::new("threads");
    let executor = Executor::for_ram(Default::default()).unwrap();
    let dir = scratch.dir().to_str().unwrap().to_string();
    let meshes: Vec<Mesh> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|index| {
                let options = MeshOptions {
                    host_domain_index: Some(index),
                    host_domain_count: Some(3),
                    directory: Some(dir.clone()),
                    job: Some("threads".into()),
                    timeout_seconds: Some(10),
                    ..Default::default()
                };
                let executor = &executor;
                s.spawn(move || Mesh::bootstrap(executor, options).unwrap())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let err = executor.free().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InUse, "{err}");
    let lease = meshes[0].borrow().unwrap();
    assert_eq!(meshes[0].free().unwrap_err().kind(), ErrorKind::InUse);
    drop(lease);
    for mesh in &meshes {
        assert_eq!(mesh.describe().unwrap().host_domain_count, 3);
        mesh.free().unwrap();
        mesh.free().unwrap();
        assert_eq!(mesh.describe().unwrap_err().kind(), ErrorKind::FreedHandle);
    }
    assert!(entries(scratch.dir()).is_empty());
    executor.free().unwrap();
}

#[test]
fn mesh_without_peers_touches_no_file() {
    let executor = Executor::for_ram(Default::default()).unwrap();
    let options = MeshOptions {
        host_domain_count: Some(1),
        directory: Some("/nonexistent/uform".into()),
        job: Some("..".into()),
        ..Default::default()
    };
    let mesh = Mesh::bootstrap(&executor, options).unwrap();
    assert_eq!(mesh.describe().unwrap().host_domain_count, 1);
    drop(mesh);
    let err = Mesh::bootstrap(
        &executor,
        MeshOptions { host_domain_index: Some(1), host_domain_count: Some(1), ..Default::default() },
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.message().starts_with("`options.host_domain_index`"), "{err}");
    executor.free().unwrap();
}

#[test]
fn mesh_options_from_the_environment_of_launchers() {
    let results = Scratch::new("env");
    let cases: [(&[(&str, &str)], &str); 4] = [
        (&[], "Ok(None)"),
        (
            &[("RANK", "2"), ("WORLD_SIZE", "4"), ("TORCHELASTIC_RUN_ID", "r1")],
            "host_domain_index: Some(2), host_domain_count: Some(4)",
        ),
        (
            &[("SLURM_PROCID", "1"), ("SLURM_NTASKS", "3"), ("SLURM_JOB_ID", "77"), ("SLURM_STEP_ID", "0")],
            "job: Some(\"slurm-77-0\")",
        ),
        (&[("RANK", "two"), ("WORLD_SIZE", "4")], "`RANK` must be a non-negative decimal number, got \\\"two\\\""),
    ];
    for (i, (vars, expected)) in cases.iter().enumerate() {
        let result = results.dir().join(format!("env-{i}"));
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", "mesh_peer_entry", "--test-threads=1", "-q"])
            .env(ROLE, "env")
            .env("UFORM_MESH_RESULT", &result);
        for name in [
            "RANK",
            "WORLD_SIZE",
            "TORCHELASTIC_RUN_ID",
            "SLURM_PROCID",
            "SLURM_NTASKS",
            "SLURM_JOB_ID",
            "SLURM_STEP_ID",
        ] {
            command.env_remove(name);
        }
        command.envs(vars.iter().copied()).stdout(Stdio::null());
        assert!(command.status().unwrap().success());
        let text = std::fs::read_to_string(&result).unwrap();
        assert!(text.contains(expected), "{vars:?}: {text}");
    }
    // The pure form over a lookup.
    let options =
        mesh_options_from_lookup(|name| (name == "SLURM_PROCID" || name == "SLURM_NTASKS").then(|| "1".to_string()))
            .unwrap()
            .unwrap();
    assert_eq!((options.host_domain_index, options.host_domain_count, options.job), (Some(1), Some(1), None));
}
