//! A mesh on a directory shared with other users: planted links, job directories and records of other users, the
//! `group` option, and the modes a run's files get.
//!
//! Another user is real where the tests run as root (`chown`, and peers spawned as `nobody`). Elsewhere an
//! unprivileged user cannot make files of another uid, so the foreign-owner cases fall back to a directory another
//! user already owns (`/tmp`, owned by root and world-writable), to a symbolic link for the foreign record, and to
//! this user's own group for the `group` option; each fallback prints a WARNING saying so.

use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

const NOBODY: u32 = 65534;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

/// Bootstraps index 0 of 2 in this process and returns the error it must fail with, at once.
fn refused(dir: &Path, job: &str, group: Option<&str>) -> uform_core::Error {
    let executor = Executor::for_ram(Default::default()).unwrap();
    let options = MeshOptions {
        host_domain_index: Some(0),
        host_domain_count: Some(2),
        directory: Some(dir.to_str().unwrap().to_string()),
        job: Some(job.into()),
        timeout_seconds: Some(20),
        group: group.map(str::to_string),
        ..Default::default()
    };
    let start = Instant::now();
    let err = Mesh::bootstrap(&executor, options).expect_err("bootstrap must refuse");
    assert!(start.elapsed() < Duration::from_secs(5), "refused only after {:?}: {err}", start.elapsed());
    executor.free().unwrap();
    err
}

/// A results directory that peers running as `nobody` can write to.
fn open_results(name: &str) -> Scratch {
    let results = Scratch::new(name);
    set_mode(results.dir(), 0o777);
    results
}

#[test]
fn mesh_planted_link_is_refused_and_its_target_untouched() {
    let scratch = Scratch::new("planted");
    let elsewhere = Scratch::new("victim");
    let victim = elsewhere.dir().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("data.txt"), "precious").unwrap();
    std::os::unix::fs::symlink(&victim, scratch.dir().join("job1")).unwrap();
    // Two processes bootstrap job `job1`, as the report tried it.
    let results = Scratch::new("planted-results");
    let spec = |index| Spec { index: Some(index), count: Some(2), timeout: Some(20), ..Spec::default() };
    let peers = [0, 1].map(|index| spawn(scratch.dir(), "job1", spec(index), results.dir()));
    for text in peers.map(finish) {
        assert!(text.starts_with("err|conflict|"), "{text}");
        let job = scratch.dir().join("job1").display().to_string();
        assert!(text.contains(&job) && text.contains("symbolic link"), "{text}");
        assert!(text.contains(&format!("to `{}`", victim.display())), "{text}");
    }
    assert_eq!(entries(&victim), BTreeSet::from(["data.txt".to_string()]));
    assert_eq!(std::fs::read_to_string(victim.join("data.txt")).unwrap(), "precious");
    // The link stays as it was found, and nothing was added beside it.
    assert_eq!(entries(scratch.dir()), BTreeSet::from(["job1".to_string()]));
    assert!(std::fs::symlink_metadata(scratch.dir().join("job1")).unwrap().file_type().is_symlink());

    // A dangling link is not created through, and a plain file is not a job directory.
    std::os::unix::fs::symlink(scratch.dir().join("nowhere"), scratch.dir().join("dangling")).unwrap();
    std::fs::write(scratch.dir().join("file"), "").unwrap();
    for (job, says) in [("dangling", "symbolic link"), ("file", "is not a directory")] {
        let err = refused(scratch.dir(), job, None);
        assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
        assert!(err.message().contains(says) && err.message().contains("nothing was written"), "{err}");
    }
    assert!(!scratch.dir().join("nowhere").exists());
}

/// Without root: a directory that another user owns and that is open to everyone (`/tmp` is root's, mode 1777) is
/// refused, naming the owner and the mode, and nothing is written there. `false` when there is none to try.
fn foreign_system_directory_is_refused() -> bool {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    for candidate in ["/tmp", "/var/tmp"] {
        let path = Path::new(candidate);
        let Ok(meta) = std::fs::symlink_metadata(path) else { continue };
        if !meta.is_dir() || meta.uid() == me {
            continue;
        }
        let before = entries(path);
        let err = refused(path.parent().unwrap(), path.file_name().unwrap().to_str().unwrap(), None);
        assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
        let owner = format!("owner uid {}", meta.uid());
        let mode = format!("mode {:04o}", meta.mode() & 0o7777);
        assert!(err.message().contains(&owner) && err.message().contains(&mode), "{err}");
        assert!(entries(path).iter().all(|n| before.contains(n) || !n.starts_with("member-")));
        return true;
    }
    false
}

#[test]
fn mesh_job_directory_of_another_user_is_refused() {
    if !is_root() {
        eprintln!(
            "WARNING: mesh_job_directory_of_another_user_is_refused is not root and cannot make a directory of another \
             uid; it tries a system directory another user owns instead"
        );
        assert!(foreign_system_directory_is_refused(), "no directory of another user to try");
        return;
    }
    let scratch = Scratch::new("theirs");
    let results = open_results("theirs-results");
    // Another user's private job directory.
    let theirs = scratch.dir().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    set_mode(&theirs, 0o700);
    std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    let err = refused(scratch.dir(), "theirs", None);
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(err.message().contains("owner uid 65534") && err.message().contains("mode 0700"), "{err}");
    assert!(err.message().contains("belongs to another user"), "{err}");
    assert!(entries(&theirs).is_empty());
    // Seen from the other side: `nobody` refuses a job directory root made, readable to all.
    let roots = scratch.dir().join("roots");
    std::fs::create_dir(&roots).unwrap();
    set_mode(&roots, 0o755);
    let spec = Spec { index: Some(0), count: Some(2), timeout: Some(20), uid: Some(NOBODY), ..Spec::default() };
    let text = finish(spawn(scratch.dir(), "roots", spec, results.dir()));
    assert!(text.starts_with("err|conflict|") && text.contains("owner uid 0") && text.contains("mode 0755"), "{text}");
    assert!(entries(&roots).is_empty());
}

#[test]
fn mesh_world_writable_job_directory_is_refused() {
    let scratch = Scratch::new("open");
    // This user's own directory, but open to its group or to everyone: others could add or remove records.
    for (job, open) in [("everyone", 0o777), ("group", 0o770)] {
        let path = scratch.dir().join(job);
        std::fs::create_dir(&path).unwrap();
        set_mode(&path, open);
        let err = refused(scratch.dir(), job, None);
        assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
        assert!(err.message().contains(&format!("mode {open:04o}")), "{err}");
        assert!(err.message().contains("writable by its group or others"), "{err}");
        assert!(entries(&path).is_empty());
    }
    if !is_root() {
        eprintln!(
            "WARNING: mesh_world_writable_job_directory_is_refused is not root and cannot make a directory of another \
             uid; it tries a world-writable system directory another user owns instead"
        );
        assert!(foreign_system_directory_is_refused(), "no directory of another user to try");
        return;
    }
    // Planted by another user, world-writable: two peers both refuse it, naming owner and mode, and write nothing.
    let planted = scratch.dir().join("planted");
    std::fs::create_dir(&planted).unwrap();
    set_mode(&planted, 0o777);
    std::os::unix::fs::chown(&planted, Some(NOBODY), Some(NOBODY)).unwrap();
    let results = Scratch::new("open-results");
    let spec = |index| Spec { index: Some(index), count: Some(2), timeout: Some(20), ..Spec::default() };
    for text in [0, 1].map(|index| finish(spawn(scratch.dir(), "planted", spec(index), results.dir()))) {
        assert!(text.starts_with("err|conflict|"), "{text}");
        assert!(text.contains("owner uid 65534") && text.contains("mode 0777"), "{text}");
    }
    assert!(entries(&planted).is_empty());
}

#[test]
fn mesh_record_of_another_user_is_ignored_and_reported() {
    let scratch = Scratch::new("foreign-owner");
    let results = Scratch::new("foreign-owner-results");
    let job = scratch.dir().join("f");
    std::fs::create_dir(&job).unwrap();
    set_mode(&job, 0o700);
    // A well-formed record that claims index 0 of this run: counted, it would be a duplicate-index conflict.
    let planted = "member-0-00000000000000cc.json";
    let text = r#"{"version":2,"job":"f","nonce":"00000000000000cc","host":"elsewhere","machine":"other-boot/pid:[1]",
        "pid":4242,"start_time":7,"index":0,"count":2,"gpus_per_multimem_domain":0,"gpus":[]}"#;
    let why = if is_root() {
        std::fs::write(job.join(planted), text).unwrap();
        std::os::unix::fs::chown(job.join(planted), Some(NOBODY), Some(NOBODY)).unwrap();
        "its owner uid 65534 (nobody) is not the job directory's owner uid 0"
    } else {
        eprintln!(
            "WARNING: mesh_record_of_another_user_is_ignored_and_reported is not root and cannot make a file of another \
             uid; it plants the record as a symbolic link instead, which is ignored the same way"
        );
        let target = results.dir().join("record.json");
        std::fs::write(&target, text).unwrap();
        std::os::unix::fs::symlink(&target, job.join(planted)).unwrap();
        "it is a symbolic link"
    };
    // Alone at index 1, a peer is never satisfied by the planted index 0, and says why when it times out.
    let lone = Spec { index: Some(1), count: Some(2), timeout: Some(1), ..Spec::default() };
    let text = finish(spawn(scratch.dir(), "f", lone, results.dir()));
    assert!(text.starts_with("err|timeout|") && text.contains("host domain index [0] of 2 never joined"), "{text}");
    assert!(text.contains("records ignored, never counted as peers") && text.contains(planted), "{text}");
    assert!(text.contains(why), "{text}");
    assert_eq!(entries(&job), BTreeSet::from([planted.to_string()]));
    // A real run meets beside it, and cleanup takes only its own entries: the planted file and its directory stay.
    assert_met(&run(scratch.dir(), results.dir(), "f", 2, 30), 2);
    assert_eq!(entries(&job), BTreeSet::from([planted.to_string()]));
}

#[test]
fn mesh_new_job_directory_is_private_and_a_run_leaves_no_entry() {
    let scratch = Scratch::new("private");
    let results = Scratch::new("private-results");
    let hold = results.dir().join("hold");
    let job = scratch.dir().join("p");
    let peers = two_holding(scratch.dir(), "p", &hold, results.dir());
    assert_eq!(mode(&job), 0o700);
    let names = entries(&job);
    assert!(names.iter().filter(|n| n.starts_with("member-")).count() == 2, "{names:?}");
    for name in &names {
        assert_eq!(mode(&job.join(name)), 0o600, "{name}");
    }
    std::fs::write(&hold, "").unwrap();
    assert_met(&peers.map(finish), 2);
    assert!(entries(scratch.dir()).is_empty(), "{:?}", entries(&job));
}

#[test]
fn mesh_group_option_lets_users_of_one_group_meet() {
    let scratch = Scratch::new("group");
    let results = open_results("group-results");
    let hold = results.dir().join("hold");
    // SAFETY: getegid has no preconditions.
    let my_gid = unsafe { libc::getegid() };
    // Root: a base directory of the group, root at index 0 naming the group, `nobody` at index 1 by number.
    let (base, gid, second) = if is_root() {
        let base = scratch.dir().join("shared");
        std::fs::create_dir(&base).unwrap();
        std::os::unix::fs::chown(&base, Some(0), Some(NOBODY)).unwrap();
        set_mode(&base, 0o2770);
        (base, NOBODY, Some(NOBODY))
    } else {
        eprintln!(
            "WARNING: mesh_group_option_lets_users_of_one_group_meet is not root and has no second user; both peers \
             run as this user with its own group"
        );
        (scratch.dir().to_path_buf(), my_gid, None)
    };
    let group_name = if is_root() { "nogroup".to_string() } else { my_gid.to_string() };
    let job = base.join("g");
    let spec = |index, group: String, uid| Spec {
        index: Some(index),
        count: Some(2),
        timeout: Some(30),
        hold: Some(hold.clone()),
        group: Some(group),
        uid,
        ..Spec::default()
    };
    let first = spawn(&base, "g", spec(0, group_name, None), results.dir());
    wait_for("the first record", || members(&job) == 1);
    let other = spawn(&base, "g", spec(1, gid.to_string(), second), results.dir());
    let peers = [first, other];
    wait_for("both to join", || {
        peers
            .iter()
            .all(|p| std::fs::read_to_string(&p.result).is_ok_and(|t| t.starts_with("ok|") || t.contains("err")))
    });
    // The job directory is the group's, setgid so every entry is too, and open to nobody else.
    let meta = std::fs::metadata(&job).unwrap();
    assert_eq!((meta.mode() & 0o7777, meta.gid()), (0o2770, gid));
    let names = entries(&job);
    let owners: BTreeSet<u32> = names
        .iter()
        .filter(|n| n.starts_with("member-"))
        .map(|n| std::fs::metadata(job.join(n)).unwrap().uid())
        .collect();
    for name in &names {
        let meta = std::fs::metadata(job.join(name)).unwrap();
        assert_eq!((meta.mode() & 0o7777, meta.gid()), (0o640, gid), "{name}");
    }
    if second.is_some() {
        assert_eq!(owners, BTreeSet::from([0, NOBODY]), "two users meet");
    }
    std::fs::write(&hold, "").unwrap();
    assert_met(&peers.map(finish), 2);
    assert!(entries(&base).is_empty(), "{:?}", entries(&job));

    // A group this host does not know, and a directory that does not fit the group, are refused.
    let err = refused(&base, "g", Some("uform-no-such-group"));
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.message().starts_with("`options.group`"), "{err}");
    let private = base.join("private");
    std::fs::create_dir(&private).unwrap();
    set_mode(&private, 0o700);
    std::os::unix::fs::chown(&private, None, Some(my_gid)).unwrap();
    if my_gid != gid {
        let err = refused(&base, "private", Some(&gid.to_string()));
        assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
        assert!(err.message().contains("does not belong to the `group` option's"), "{err}");
    }
    let open = base.join("open");
    std::fs::create_dir(&open).unwrap();
    std::os::unix::fs::chown(&open, None, Some(gid)).unwrap();
    set_mode(&open, 0o2777);
    let err = refused(&base, "open", Some(&gid.to_string()));
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(err.message().contains("mode 2777") && err.message().contains("writable by others"), "{err}");
    assert!(entries(&open).is_empty() && entries(&private).is_empty());
}
