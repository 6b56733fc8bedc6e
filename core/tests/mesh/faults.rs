//! Faults: each gives its documented error kind and leaves nothing that a new peer would count as live (a peer
//! killed while joining or after, a stale job directory, a colliding record, a directory that cannot be written,
//! read-only, full or past a file size limit), and a rerun after each works.

use super::*;

/// The indices a timeout names as never joined: `host domain indices [1, 3-5] of 8 never joined` gives 1, 3, 4, 5.
fn missing_indices(text: &str) -> Vec<u64> {
    let listed = text.split("indices [").nth(1).and_then(|rest| rest.split(']').next()).unwrap_or_default();
    listed
        .split(", ")
        .filter_map(|part| match part.split_once('-') {
            Some((low, high)) => Some((low.parse::<u64>().ok()?..=high.parse::<u64>().ok()?).collect::<Vec<_>>()),
            None => part.parse::<u64>().ok().map(|i| vec![i]),
        })
        .flatten()
        .collect()
}

/// A run of four of `job` in `dir` while it joins: index 1 (the victim, timeout 60 s), then 0 and 2 (timeout
/// `timeout`), returned once their three records are written; index 3 has not come.
fn joining_without_3(dir: &Path, job: &str, results: &Path, timeout: u32) -> (Peer, [Peer; 2]) {
    let spec = |index, timeout| Spec { index: Some(index), count: Some(4), timeout: Some(timeout), ..Spec::default() };
    let records = dir.join(job);
    let victim = spawn(dir, job, spec(1, 60), results);
    wait_for("the victim's record", || members(&records) == 1);
    let survivors = [spawn(dir, job, spec(0, timeout), results), spawn(dir, job, spec(2, timeout), results)];
    wait_for("three records", || members(&records) == 3);
    (victim, survivors)
}

#[test]
fn mesh_peer_killed_while_joining_then_a_rerun_works() {
    let scratch = Scratch::new("killed-joining");
    let results = Scratch::new("killed-joining-results");
    let job = scratch.dir().join("k");
    // Index 3 never comes, so the run is still joining when index 1 is killed.
    let (victim, survivors) = joining_without_3(scratch.dir(), "k", results.dir(), 2);
    let victim_pid = pid(&victim);
    kill(victim);
    let outcome = survivors.map(finish);
    for text in &outcome {
        assert!(text.starts_with("err|timeout|"), "{text}");
        // The survivor that times out first takes its record along, so the other may name it missing too.
        let listed = missing_indices(text);
        assert!(listed.contains(&1) && listed.contains(&3) && text.contains("of 4 never joined"), "{text}");
    }
    // Whichever survivor removed the dead record says why.
    let note = format!("index 1: process {victim_pid} on host");
    assert!(outcome.iter().any(|text| text.contains(&note)), "{outcome:?}");
    assert!(!job.exists(), "{:?}", entries(&job));
    assert_met(&run(scratch.dir(), results.dir(), "k", 4, 30), 4);
    assert!(entries(scratch.dir()).is_empty());
}

#[test]
fn mesh_peer_killed_after_joining_then_a_rerun_works() {
    let scratch = Scratch::new("killed-joined");
    let results = Scratch::new("killed-joined-results");
    let hold = results.dir().join("hold");
    let [survivor, victim] = two_holding(scratch.dir(), "j", &hold, results.dir());
    kill(victim);
    std::fs::write(&hold, "").unwrap();
    // The mesh holds no connection: the survivor leaves cleanly, and as the last live member on this machine it
    // removes the job directory.
    assert_eq!(finish(survivor), "ok|0|2|0|0|peer-read|0\nfreed|ok\n");
    assert!(entries(scratch.dir()).is_empty(), "{:?}", entries(&scratch.dir().join("j")));
    assert_met(&run(scratch.dir(), results.dir(), "j", 2, 30), 2);
}

#[test]
fn mesh_stale_job_directory_from_a_killed_run() {
    let scratch = Scratch::new("stale");
    let results = Scratch::new("stale-results");
    let job = scratch.dir().join("s");
    let spec = |index| Spec { index: Some(index), count: Some(3), timeout: Some(60), ..Spec::default() };
    let old: Vec<Peer> = (0..2).map(|i| spawn(scratch.dir(), "s", spec(i), results.dir())).collect();
    wait_for("the old run's records", || members(&job) == 2);
    old.into_iter().for_each(kill);
    // What an earlier, finished run left on another machine: a record with its done marker.
    let finished = r#"{"version":2,"job":"s","nonce":"00000000000000aa","host":"elsewhere","machine":"other-boot/pid:[1]",
        "pid":4242,"start_time":7,"index":2,"count":3,"gpus_per_multimem_domain":0,"gpus":[]}"#;
    std::fs::write(job.join("member-2-00000000000000aa.json"), finished).unwrap();
    std::fs::write(job.join("done-2-00000000000000aa"), "").unwrap();
    std::fs::write(job.join("ready-2-00000000000000aa-0123456789abcdef"), "").unwrap();
    assert_eq!(members(&job), 3);
    let leftovers: BTreeSet<String> = entries(&job).into_iter().filter(|n| n.contains("00000000000000aa")).collect();
    assert_met(&run(scratch.dir(), results.dir(), "s", 3, 30), 3);
    // The killed run's records of this machine went as stale; cleanup removes only what the new run created, so the
    // other machine's finished leftovers stay, with the directory that holds them.
    assert_eq!(entries(&job), leftovers);
}

#[test]
fn mesh_record_of_another_machine_that_collides_names_the_file() {
    let scratch = Scratch::new("foreign");
    let results = Scratch::new("foreign-results");
    let job = scratch.dir().join("f");
    std::fs::create_dir(&job).unwrap();
    let foreign = r#"{"version":2,"job":"f","nonce":"00000000000000bb","host":"elsewhere","machine":"other-boot/pid:[1]",
        "pid":4242,"start_time":7,"index":0,"count":2,"gpus_per_multimem_domain":0,"gpus":[]}"#;
    std::fs::write(job.join("member-0-00000000000000bb.json"), foreign).unwrap();
    let text = finish(spawn(
        scratch.dir(),
        "f",
        Spec { index: Some(0), count: Some(2), timeout: Some(2), ..Spec::default() },
        results.dir(),
    ));
    assert!(text.starts_with("err|conflict|"), "{text}");
    assert!(text.contains("(host elsewhere, pid 4242)") && text.contains("member-0-00000000000000bb.json"), "{text}");
    // Only the foreign file remains: this process left nothing.
    assert_eq!(entries(&job), BTreeSet::from(["member-0-00000000000000bb.json".to_string()]));
}

#[test]
fn mesh_unwritable_directory_is_an_io_error() {
    let scratch = Scratch::new("unwritable");
    let executor = Executor::for_ram(Default::default()).unwrap();
    let file = scratch.dir().join("a file");
    std::fs::write(&file, "").unwrap();
    let mut directories = vec![file.join("below"), file.clone(), scratch.dir().join("missing"), PathBuf::from("/proc")];
    // Root ignores permission bits, so a read-only directory only fails for other users.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        let read_only = scratch.dir().join("read-only");
        std::fs::create_dir(&read_only).unwrap();
        std::fs::set_permissions(&read_only, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
        directories.push(read_only);
    }
    for directory in directories {
        let options = MeshOptions {
            host_domain_index: Some(0),
            host_domain_count: Some(2),
            directory: Some(directory.to_str().unwrap().to_string()),
            job: Some("j".into()),
            timeout_seconds: Some(1),
            ..Default::default()
        };
        let start = Instant::now();
        let err = Mesh::bootstrap(&executor, options).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Io, "{directory:?}: {err}");
        assert!(err.message().contains(&directory.display().to_string()), "{err}");
        assert!(start.elapsed() < Duration::from_millis(500), "an I/O error fails at once");
    }
    assert_eq!(
        entries(scratch.dir()),
        BTreeSet::from(["a file".to_string()])
            .into_iter()
            // SAFETY: `geteuid` cannot fail and touches no memory.
            .chain(if unsafe { libc::geteuid() } != 0 { Some("read-only".to_string()) } else { None })
            .collect()
    );
    executor.free().unwrap();
}

#[test]
fn mesh_peer_killed_while_joining_a_replacement_completes_the_run() {
    let scratch = Scratch::new("killed-replaced");
    let results = Scratch::new("killed-replaced-results");
    let job = scratch.dir().join("r");
    // Index 3 comes only after the kill, so nobody can have confirmed a roster with the victim in it (with every index
    // present the run forms at once, and a kill then is a kill after the join).
    let (victim, survivors) = joining_without_3(scratch.dir(), "r", results.dir(), 30);
    kill(victim);
    // The survivors are still waiting. The dead record must not count as index 1, neither as its member (it can never
    // confirm) nor as a rival of the new process that takes index 1 (a duplicate-index conflict).
    let spec = |index| Spec { index: Some(index), count: Some(4), timeout: Some(30), ..Spec::default() };
    let replacement = spawn(scratch.dir(), "r", spec(1), results.dir());
    let last = spawn(scratch.dir(), "r", spec(3), results.dir());
    let [first, third] = survivors;
    assert_met(&[finish(first), finish(replacement), finish(third), finish(last)], 4);
    assert!(entries(scratch.dir()).is_empty(), "{:?}", entries(&job));
}

#[test]
fn mesh_whole_run_killed_after_joining_leaves_nothing_live() {
    let scratch = Scratch::new("all-killed");
    let results = Scratch::new("all-killed-results");
    let job = scratch.dir().join("a");
    let hold = results.dir().join("hold");
    let peers = two_holding(scratch.dir(), "a", &hold, results.dir());
    let dead_pid = pid(&peers[1]);
    peers.into_iter().for_each(kill);
    // Records and ready markers of a whole run, none of them marked done.
    let left = entries(&job);
    assert_eq!(left.iter().filter(|n| n.starts_with("member-")).count(), 2, "{left:?}");
    assert_eq!(left.iter().filter(|n| n.starts_with("ready-")).count(), 2, "{left:?}");
    // A newcomer counts none of them: it waits for index 1 as if the directory were empty, says why the old record
    // went, and its timeout takes everything along.
    let lone = Spec { index: Some(0), count: Some(2), timeout: Some(1), ..Spec::default() };
    let text = finish(spawn(scratch.dir(), "a", lone, results.dir()));
    assert!(text.starts_with("err|timeout|") && text.contains("host domain index [1] of 2 never joined"), "{text}");
    assert!(text.contains(&format!("index 1: process {dead_pid} on host")), "{text}");
    assert!(entries(scratch.dir()).is_empty(), "{:?}", entries(&job));
    assert_met(&run(scratch.dir(), results.dir(), "a", 2, 30), 2);
    assert!(entries(scratch.dir()).is_empty(), "{:?}", entries(&job));
}

#[test]
fn mesh_read_only_directory_is_an_io_error_and_leaves_nothing() {
    let scratch = Scratch::new("read-only");
    let results = Scratch::new("read-only-results");
    let dir = scratch.dir().join("shared");
    std::fs::create_dir(&dir).unwrap();
    // The directory also holds what a killed run left: records of processes that are gone.
    let left = dir.join("left");
    let old: Vec<Peer> = (0..2)
        .map(|index| {
            spawn(
                &dir,
                "left",
                Spec { index: Some(index), count: Some(3), timeout: Some(60), ..Spec::default() },
                results.dir(),
            )
        })
        .collect();
    wait_for("the killed run's records", || members(&left) == 2);
    old.into_iter().for_each(kill);
    let before = entries(&left);
    let setup = r#"mount --bind "$0" "$0" && mount -o remount,bind,ro "$0""#;
    if let Err(why) = namespaced(setup, &dir, "read-only", results.dir()) {
        eprintln!(
            "WARNING: mesh_read_only_directory_is_an_io_error_and_leaves_nothing cannot make a read-only bind mount \
             ({why}); it makes the directory unwritable for an unprivileged user instead"
        );
        read_only_for_another_user(&dir, results.dir());
    }
    // Nothing was added, nothing taken.
    assert_eq!(entries(&dir), BTreeSet::from(["left".to_string()]));
    assert_eq!(entries(&left), before);
    // Writable again: new runs meet there, and the killed run's records count for nothing.
    assert_met(&run(&dir, results.dir(), "fresh", 2, 30), 2);
    assert_met(&run(&dir, results.dir(), "left", 3, 30), 3);
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
}

/// In `dir` (read-only to this process): joining a new job and joining the job a killed run left both fail at once
/// with an I/O error naming the job directory.
fn read_only_fails_at_once(dir: &Path) {
    let executor = Executor::for_ram(Default::default()).unwrap();
    for job in ["fresh", "left"] {
        let options = MeshOptions {
            host_domain_index: Some(0),
            host_domain_count: Some(3),
            directory: Some(dir.to_str().unwrap().to_string()),
            job: Some(job.into()),
            timeout_seconds: Some(30),
            ..Default::default()
        };
        let start = Instant::now();
        let err = Mesh::bootstrap(&executor, options).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Io, "{job}: {err}");
        assert!(err.message().contains(&dir.join(job).display().to_string()), "{err}");
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "an I/O error fails at once, not after {:?}",
            start.elapsed()
        );
    }
    executor.free().unwrap();
}

/// The fallback without mount namespaces: root ignores permission bits, so root runs the scenario in a child process
/// as `nobody`; anyone else takes the write permission away from itself.
fn read_only_for_another_user(dir: &Path, results: &Path) {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let status = std::os::unix::process::CommandExt::uid(
            std::os::unix::process::CommandExt::gid(&mut scenario_command(dir, "read-only", results), 65534),
            65534,
        )
        .status()
        .unwrap();
        assert!(status.success(), "the read-only scenario as nobody failed with {status}");
    } else {
        let paths = [dir.to_path_buf(), dir.join("left")];
        for path in &paths {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o555)).unwrap();
        }
        read_only_fails_at_once(dir);
        for path in &paths {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
}

#[test]
fn mesh_full_file_system_is_an_io_error_and_leaves_nothing() {
    let scratch = Scratch::new("full");
    let results = Scratch::new("full-results");
    let dir = scratch.dir().join("small");
    std::fs::create_dir(&dir).unwrap();
    // Four pages: the filler takes them all, then all but one (room for one record).
    if let Err(why) = namespaced(r#"mount -t tmpfs -o size=16k uform-test "$0""#, &dir, "full-disk", results.dir()) {
        eprintln!(
            "WARNING: mesh_full_file_system_is_an_io_error_and_leaves_nothing cannot mount a small tmpfs ({why}); it \
             makes writes fail with RLIMIT_FSIZE instead"
        );
        writes_fail(&dir, results.dir(), WriteFault::FileSizeLimit);
    }
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
}

#[test]
fn mesh_writes_past_a_file_size_limit_are_an_io_error_and_leave_nothing() {
    let scratch = Scratch::new("fsize");
    let results = Scratch::new("fsize-results");
    writes_fail(scratch.dir(), results.dir(), WriteFault::FileSizeLimit);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WriteFault {
    /// `dir` is a small file system that a filler file fills.
    FullDisk,
    /// The failing process runs with RLIMIT_FSIZE 0.
    FileSizeLimit,
}

/// Writes fail for the process joining job `w` of `dir`, first alone, then while a healthy peer waits. Each failure
/// is an I/O error naming the job directory, at once (not at the 30 s timeout), and leaves nothing of that process,
/// not even the job directory it made; once writes work again a new process completes the run with the waiting peer.
fn writes_fail(dir: &Path, results: &Path, fault: WriteFault) {
    const PAGE: u64 = 4096;
    let job = dir.join("w");
    let filler = dir.join("filler");
    let spec = |index, failing: bool| Spec {
        index: Some(index),
        count: Some(2),
        timeout: Some(30),
        fsize: (failing && fault == WriteFault::FileSizeLimit).then_some(0),
        ..Spec::default()
    };
    let fails_at_once = |peer: Peer| {
        let start = Instant::now();
        let text = finish(peer);
        assert!(text.starts_with("err|io|") && text.contains(&job.display().to_string()), "{fault:?}: {text}");
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{fault:?}: failed only after {:?}: {text}",
            start.elapsed()
        );
    };
    let only_filler = || -> BTreeSet<String> {
        if fault == WriteFault::FullDisk {
            BTreeSet::from(["filler".to_string()])
        } else {
            BTreeSet::new()
        }
    };

    if fault == WriteFault::FullDisk {
        let mut file = std::fs::File::create(&filler).unwrap();
        let error = loop {
            if let Err(e) = std::io::Write::write_all(&mut file, &[7u8; PAGE as usize]) {
                break e;
            }
        };
        assert_eq!(error.raw_os_error(), Some(libc::ENOSPC), "filling {}: {error}", dir.display());
        assert!(file.metadata().unwrap().len() >= PAGE, "the file system had no room to fill");
    }
    fails_at_once(spawn(dir, "w", spec(0, true), results));
    assert_eq!(entries(dir), only_filler(), "{fault:?}: {:?}", entries(&job));

    if fault == WriteFault::FullDisk {
        let file = std::fs::OpenOptions::new().write(true).open(&filler).unwrap();
        let length = file.metadata().unwrap().len();
        file.set_len(length / PAGE * PAGE - PAGE).unwrap();
    }
    let waiting = spawn(dir, "w", spec(0, false), results);
    wait_for("the waiting peer's record", || members(&job) == 1);
    fails_at_once(spawn(dir, "w", spec(1, true), results));
    let left = entries(&job);
    assert!(left.len() == 1 && left.iter().all(|n| n.starts_with("member-0-")), "{fault:?}: {left:?}");

    if fault == WriteFault::FullDisk {
        std::fs::remove_file(&filler).unwrap();
    }
    let replacement = spawn(dir, "w", spec(1, false), results);
    assert_met(&[finish(waiting), finish(replacement)], 2);
    assert!(entries(dir).is_empty(), "{fault:?}: {:?}", entries(dir));
}

/// A fault scenario, run in a child process that `namespaced` (or a fallback) set up.
pub(super) fn scenario(name: &str) {
    let dir = PathBuf::from(env("UFORM_MESH_DIR").unwrap());
    let results = PathBuf::from(env("UFORM_MESH_RESULTS").unwrap());
    match name {
        "read-only" => read_only_fails_at_once(&dir),
        "full-disk" => writes_fail(&dir, &results, WriteFault::FullDisk),
        other => panic!("no scenario {other}"),
    }
}

fn scenario_command(dir: &Path, name: &str, results: &Path) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "mesh_peer_entry", "--nocapture", "--test-threads=1", "-q"])
        .env(ROLE, "scenario")
        .env("UFORM_MESH_SCENARIO", name)
        .env("UFORM_MESH_DIR", dir)
        .env("UFORM_MESH_RESULTS", results);
    command
}

/// Why this machine cannot give a process its own mounts (`unshare -Urm`, then a tmpfs), or `None` when it can.
/// `UFORM_TEST_NO_NAMESPACES=1` pretends it cannot, to exercise the fallbacks.
fn namespaces_unavailable() -> Option<String> {
    static PROBE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    PROBE
        .get_or_init(|| {
            if env("UFORM_TEST_NO_NAMESPACES").is_some_and(|v| v == "1") {
                return Some("UFORM_TEST_NO_NAMESPACES=1".into());
            }
            let probe = Scratch::new("namespace-probe");
            let output = Command::new("unshare")
                .args(["-Urm", "sh", "-c", r#"mount -t tmpfs -o size=4k uform-probe "$0""#])
                .arg(probe.dir())
                .output();
            match output {
                Err(e) => Some(format!("cannot run `unshare`: {e}")),
                Ok(o) if o.status.success() => None,
                Ok(o) => Some(format!(
                    "`unshare -Urm` and a tmpfs mount failed with {}: {}",
                    o.status,
                    String::from_utf8_lossy(&o.stderr).trim()
                )),
            }
        })
        .clone()
}

/// Runs scenario `name` in a child process in its own user and mount namespace, after the shell command `setup`
/// (which finds `dir` as `$0`) made the fault there; the mount vanishes with the process. `Err` says why the namespace
/// cannot be made here, so the caller can fall back; a failing scenario fails the test.
fn namespaced(setup: &str, dir: &Path, name: &str, results: &Path) -> Result<(), String> {
    if let Some(why) = namespaces_unavailable() {
        return Err(why);
    }
    let inner = scenario_command(dir, name, results);
    let output = Command::new("unshare")
        .args(["-Urm", "sh", "-c", &format!("{setup} || exit 97; exec \"$@\"")])
        .arg(dir)
        .arg(inner.get_program())
        .args(inner.get_args())
        .envs(inner.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .output()
        .map_err(|e| format!("cannot run `unshare`: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => Ok(()),
        Some(97) => Err(format!("`{setup}` failed: {}", stderr.trim())),
        _ => panic!(
            "the {name} scenario failed with {}:\n{}\n{stderr}",
            output.status,
            String::from_utf8_lossy(&output.stdout)
        ),
    }
}
