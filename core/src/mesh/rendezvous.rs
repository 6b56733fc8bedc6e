//! Joining and leaving a job directory: the protocol the module documentation describes.

use super::host::process_alive;
use super::options::Rendezvous;
use super::record::{self, Name, Record};
use crate::error::{Error, Result};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The first and the longest pause between two looks at the job directory.
const FIRST_POLL: Duration = Duration::from_millis(1);
const LONGEST_POLL: Duration = Duration::from_millis(50);
/// How often a joining process checks whether the processes behind this machine's records still live.
const LIVENESS_PERIOD: Duration = Duration::from_millis(25);
/// How long a process that found a conflict keeps its record, so peers polling at the longest pause see it too.
const CONFLICT_LINGER: Duration = Duration::from_millis(100);

/// A process's membership of a run, from a successful join until it leaves.
#[derive(Debug)]
pub(crate) struct Joined {
    pub directory: PathBuf,
    pub job_path: PathBuf,
    /// (device, inode) of the job directory this process joined, so it never removes another run's directory.
    pub inode: (u64, u64),
    pub me: Record,
    /// One record per index, in index order.
    pub roster: Vec<Record>,
    pub roster_hash: String,
}

struct Watch<'a> {
    rendezvous: &'a Rendezvous,
    job_path: PathBuf,
    me: Record,
    my_name: String,
    /// Parsed records by file name; a name is written once, so a cached parse never goes stale.
    cache: HashMap<String, Record>,
    /// Why an index lost its record: its process on this machine was gone.
    departed: BTreeMap<u32, String>,
    last_liveness: Option<Instant>,
    /// The roster this process last confirmed, its members as (index, nonce), and its hash.
    confirmed: Option<(String, Vec<(u32, String)>)>,
}

/// What one look at the directory found.
struct Listing {
    names: BTreeSet<String>,
    done: HashSet<(u32, String)>,
}

enum Step {
    Joined(Vec<Record>, String),
    Waiting { missing: Missing, unconfirmed: Vec<u32> },
}

/// Indices that have no record, as ascending half-open ranges: a run of 4294967295 processes costs two numbers.
#[derive(Default, Debug, PartialEq, Eq)]
struct Missing(Vec<(u32, u32)>);

impl Missing {
    /// Adds `start..end` (nothing when empty); ranges arrive in ascending order.
    fn add(&mut self, start: u32, end: u32) {
        if start >= end {
            return;
        }
        match self.0.last_mut() {
            Some(last) if last.1 == start => last.1 = end,
            _ => self.0.push((start, end)),
        }
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn len(&self) -> u64 {
        self.0.iter().map(|(s, e)| u64::from(e - s)).sum()
    }
    fn contains(&self, index: u32) -> bool {
        self.0.iter().any(|(s, e)| (*s..*e).contains(&index))
    }
}

/// `[1, 3, 5-4294967294]`: single indices and pairs spelled out, longer runs as first-last.
impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        for (start, end) in &self.0 {
            match end - start {
                1 => parts.push(start.to_string()),
                2 => parts.extend([start.to_string(), (start + 1).to_string()]),
                _ => parts.push(format!("{start}-{}", end - 1)),
            }
        }
        write!(f, "[{}]", parts.join(", "))
    }
}

pub(crate) fn join(
    rendezvous: &Rendezvous,
    me: Record,
    shape_check: &dyn Fn(&[Record]) -> Result<()>,
) -> Result<Joined> {
    let directory = &rendezvous.directory;
    match std::fs::metadata(directory) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(Error::io(
                "using as the mesh directory",
                directory,
                &std::io::Error::from_raw_os_error(libc::ENOTDIR),
            ))
        }
        Err(e) => return Err(Error::io("opening the mesh directory", directory, &e)),
    }
    let job_path = rendezvous.job_path();
    let my_name = record::member_name(me.index, &me.nonce);
    let mut watch = Watch {
        rendezvous,
        job_path,
        me,
        my_name,
        cache: HashMap::new(),
        departed: BTreeMap::new(),
        last_liveness: None,
        confirmed: None,
    };
    let deadline = Instant::now() + rendezvous.timeout;
    // Nothing of this process exists until the job directory does; from then on every failure, whatever call it
    // comes from, takes this process's files along (and the directory when that empties it).
    watch.ensure_directory()?;
    match watch.meet(deadline, shape_check) {
        Ok((roster, roster_hash)) => match inode(&watch.job_path) {
            Ok(inode) => Ok(Joined {
                directory: rendezvous.directory.clone(),
                job_path: watch.job_path.clone(),
                inode,
                me: watch.me.clone(),
                roster,
                roster_hash,
            }),
            Err(e) => {
                watch.abandon();
                Err(Error::io("reading the job directory", &watch.job_path, &e))
            }
        },
        Err(error) => {
            // A conflict waits first so the peers see it too.
            if error.kind() == crate::ErrorKind::Conflict || error.kind() == crate::ErrorKind::InvalidArgument {
                std::thread::sleep(CONFLICT_LINGER);
            }
            watch.abandon();
            Err(error)
        }
    }
}

fn inode(path: &Path) -> std::io::Result<(u64, u64)> {
    let m = std::fs::metadata(path)?;
    Ok((m.dev(), m.ino()))
}

impl Watch<'_> {
    fn io(&self, action: &str, err: &std::io::Error) -> Error {
        Error::io(action, &self.job_path, err)
    }

    /// Writes this process's record and polls until the roster is confirmed by every member (its records and hash),
    /// the deadline passes, or a look fails. The caller removes what this process wrote when it fails.
    fn meet(
        &mut self,
        deadline: Instant,
        shape_check: &dyn Fn(&[Record]) -> Result<()>,
    ) -> Result<(Vec<Record>, String)> {
        // Stale records of this machine go before this process's own record appears, so an index never shows two.
        let first = self.list()?;
        self.refresh(&first, true)?;
        self.write_own()?;
        let mut pause = FIRST_POLL;
        let mut previous: Option<BTreeSet<String>> = None;
        loop {
            let listing = self.list()?;
            match self.step(&listing, shape_check)? {
                Step::Joined(roster, roster_hash) => return Ok((roster, roster_hash)),
                Step::Waiting { missing, unconfirmed } => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(self.timeout_error(&missing, &unconfirmed));
                    }
                    pause = if previous.as_ref() == Some(&listing.names) {
                        (pause * 2).min(LONGEST_POLL)
                    } else {
                        FIRST_POLL
                    };
                    previous = Some(listing.names);
                    std::thread::sleep(pause.min(deadline - now));
                }
            }
        }
    }

    fn ensure_directory(&self) -> Result<()> {
        match std::fs::create_dir(&self.job_path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && self.job_path.is_dir() => Ok(()),
            Err(e) => Err(self.io("creating the job directory", &e)),
        }
    }

    fn write_own(&mut self) -> Result<()> {
        match record::write_record(&self.job_path, &self.my_name, &self.me) {
            Ok(()) => Ok(()),
            // The directory was removed under us (the last process of an earlier run leaving): make it again.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.ensure_directory()?;
                self.confirmed = None;
                record::write_record(&self.job_path, &self.my_name, &self.me)
                    .map_err(|e| self.io("writing this process's mesh record into", &e))
            }
            Err(e) => Err(self.io("writing this process's mesh record into", &e)),
        }
    }

    /// Lists the directory by opening it again (a shared file system may cache an open handle's view).
    fn list(&self) -> Result<Listing> {
        let mut names = BTreeSet::new();
        let mut done = HashSet::new();
        let entries = match std::fs::read_dir(&self.job_path) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Listing { names, done }),
            Err(e) => return Err(self.io("listing the job directory", &e)),
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(self.io("listing the job directory", &e)),
            };
            let Ok(name) = entry.file_name().into_string() else { continue };
            if let Name::Done { index, nonce } = record::parse_name(&name) {
                done.insert((index, nonce));
            }
            names.insert(name);
        }
        Ok(Listing { names, done })
    }

    /// Parses new records, forgets vanished ones and, when due, removes this machine's records whose process is gone.
    fn refresh(&mut self, listing: &Listing, force_liveness: bool) -> Result<()> {
        self.cache.retain(|name, _| listing.names.contains(name));
        for name in &listing.names {
            if matches!(record::parse_name(name), Name::Member { .. }) && !self.cache.contains_key(name) {
                if let Some(r) = record::read_record(&self.job_path.join(name))? {
                    self.cache.insert(name.clone(), r);
                }
            }
        }
        let due = force_liveness || self.last_liveness.is_none_or(|t| t.elapsed() >= LIVENESS_PERIOD);
        if !due || self.me.machine.is_empty() {
            return Ok(());
        }
        self.last_liveness = Some(Instant::now());
        let confirmed_hash = self.confirmed.as_ref().map(|(h, _)| h.clone());
        let stale: Vec<(String, Record)> = self
            .cache
            .iter()
            .filter(|(_, r)| r.machine == self.me.machine && r.nonce != self.me.nonce)
            .filter(|(_, r)| {
                // A process that confirmed the roster this one confirms finished joining; keep it.
                !confirmed_hash
                    .as_ref()
                    .is_some_and(|h| listing.names.contains(&record::ready_name(r.index, &r.nonce, h)))
            })
            .filter(|(_, r)| !process_alive(r.pid, r.start_time))
            .map(|(n, r)| (n.clone(), r.clone()))
            .collect();
        for (name, r) in stale {
            remove_files_of(&self.job_path, &listing.names, r.index, &r.nonce);
            let _ = std::fs::remove_file(self.job_path.join(&name));
            self.cache.remove(&name);
            if r.count == self.me.count {
                self.departed.insert(
                    r.index,
                    format!(
                        "index {}: process {} on host {} is gone and its record was removed",
                        r.index, r.pid, r.host
                    ),
                );
            }
        }
        Ok(())
    }

    fn step(&mut self, listing: &Listing, shape_check: &dyn Fn(&[Record]) -> Result<()>) -> Result<Step> {
        // Our own files vanished: the directory was removed and made again, or cleaned. Write them again.
        if !listing.names.contains(&self.my_name) {
            self.write_own()?;
            self.confirmed = None;
            return Ok(Step::Waiting { missing: Missing::default(), unconfirmed: vec![] });
        }
        self.refresh(listing, false)?;

        // A roster this process confirmed and every member confirmed too is final, whoever came later.
        if let Some((hash, members)) = &self.confirmed {
            let complete = members.iter().all(|(index, nonce)| {
                listing.names.contains(&record::member_name(*index, nonce))
                    && listing.names.contains(&record::ready_name(*index, nonce, hash))
            });
            if complete {
                let roster: Vec<Record> = members
                    .iter()
                    .filter_map(|(index, nonce)| self.cache.get(&record::member_name(*index, nonce)).cloned())
                    .collect();
                if roster.len() == members.len() {
                    return Ok(Step::Joined(roster, hash.clone()));
                }
            }
        }

        // Group by index; records whose process left (a done marker) never conflict and only fill an index no live
        // record claims.
        let mut live: BTreeMap<u32, Vec<(&String, &Record)>> = BTreeMap::new();
        let mut finished: BTreeMap<u32, Vec<(&String, &Record)>> = BTreeMap::new();
        for (name, r) in &self.cache {
            if listing.done.contains(&(r.index, r.nonce.clone())) {
                finished.entry(r.index).or_default().push((name, r));
                continue;
            }
            if r.nonce != self.me.nonce {
                self.check_agreement(name, r)?;
            }
            live.entry(r.index).or_default().push((name, r));
        }
        // Only the claimed indices are visited, so a look costs what the directory holds, never `hostDomainCount`
        // (which may be 4294967295): the indices between them are missing, kept as ranges.
        let mut roster = Vec::new();
        let mut missing = Missing::default();
        let claimed: BTreeSet<u32> =
            live.keys().chain(finished.keys()).copied().filter(|i| *i < self.me.count).collect();
        let mut next = 0;
        for index in claimed {
            missing.add(next, index);
            next = index + 1;
            match (live.get(&index).map(Vec::as_slice), finished.get(&index).map(Vec::as_slice)) {
                (Some([one]), _) => roster.push(one.1.clone()),
                (Some(several), _) => return Err(self.duplicate_error(index, several)),
                (None, Some([one])) => roster.push(one.1.clone()),
                _ => missing.add(index, index + 1),
            }
        }
        missing.add(next, self.me.count);
        if !missing.is_empty() {
            return Ok(Step::Waiting { missing, unconfirmed: vec![] });
        }
        shape_check(&roster)?;
        let members: Vec<(u32, String)> = roster.iter().map(|r| (r.index, r.nonce.clone())).collect();
        let pairs: Vec<(u32, &str)> = members.iter().map(|(i, n)| (*i, n.as_str())).collect();
        let hash = record::roster_hash(&pairs);
        if self.confirmed.as_ref().map(|(h, _)| h) != Some(&hash) {
            let name = record::ready_name(self.me.index, &self.me.nonce, &hash);
            record::write_marker(&self.job_path, &name).map_err(|e| self.io("writing a ready marker into", &e))?;
            if let Some((old, _)) = &self.confirmed {
                let _ =
                    std::fs::remove_file(self.job_path.join(record::ready_name(self.me.index, &self.me.nonce, old)));
            }
            self.confirmed = Some((hash.clone(), members.clone()));
        }
        let unconfirmed: Vec<u32> = members
            .iter()
            .filter(|(index, nonce)| {
                *index != self.me.index && !listing.names.contains(&record::ready_name(*index, nonce, &hash))
            })
            .map(|(index, _)| *index)
            .collect();
        if unconfirmed.is_empty() {
            return Ok(Step::Joined(roster, hash));
        }
        Ok(Step::Waiting { missing: Missing::default(), unconfirmed })
    }

    fn check_agreement(&self, name: &str, r: &Record) -> Result<()> {
        let me = &self.me;
        let path = self.job_path.join(name);
        if r.count != me.count {
            return Err(Error::conflict(format!(
                "peers of job `{}` disagree on `hostDomainCount`: this process {} at index {} says {}, {} at index {} \
                 says {} (record `{}`)",
                me.job,
                me.who(),
                me.index,
                me.count,
                r.who(),
                r.index,
                r.count,
                path.display()
            )));
        }
        if r.gpus_per_multimem_domain != me.gpus_per_multimem_domain {
            return Err(Error::conflict(format!(
                "peers of job `{}` disagree on `gpusPerMultimemDomain`: this process {} at index {} has {}, {} at index \
                 {} has {} (when the option is absent each host derives its own GPU count; pass it explicitly when \
                 hosts differ) (record `{}`)",
                me.job,
                me.who(),
                me.index,
                me.gpus_per_multimem_domain,
                r.who(),
                r.index,
                r.gpus_per_multimem_domain,
                path.display()
            )));
        }
        Ok(())
    }

    fn duplicate_error(&self, index: u32, claims: &[(&String, &Record)]) -> Error {
        let described: Vec<String> =
            claims.iter().map(|(name, r)| format!("{} in `{}`", r.who(), self.job_path.join(name).display())).collect();
        Error::conflict(format!(
            "host domain index {index} of job `{}` is claimed by {} processes: {}; every process of a run needs its \
             own `hostDomainIndex`, and two concurrent runs need different `job` names (if one of these processes \
             belongs to an earlier run that was killed on another machine, remove its record)",
            self.me.job,
            claims.len(),
            described.join(" and ")
        ))
    }

    fn timeout_error(&self, missing: &Missing, unconfirmed: &[u32]) -> Error {
        let mut message = format!(
            "timed out after {} s waiting for the peers of job `{}` in `{}`",
            self.rendezvous.timeout.as_secs(),
            self.me.job,
            self.rendezvous.directory.display()
        );
        if !missing.is_empty() {
            message += &format!(
                ": host domain {} {} of {} never joined",
                if missing.len() == 1 { "index" } else { "indices" },
                missing,
                self.me.count
            );
        }
        if !unconfirmed.is_empty() {
            message += &format!(
                "{} host domain {} {:?} joined but never confirmed the roster",
                if missing.is_empty() { ":" } else { ";" },
                if unconfirmed.len() == 1 { "index" } else { "indices" },
                unconfirmed
            );
        }
        let notes: Vec<&String> = self
            .departed
            .iter()
            .filter(|(i, _)| missing.contains(**i) || unconfirmed.contains(i))
            .map(|(_, n)| n)
            .collect();
        if !notes.is_empty() {
            message += &format!(" ({})", notes.into_iter().cloned().collect::<Vec<_>>().join("; "));
        }
        Error::timeout(message)
    }

    /// Removes this process's record and markers, and the job directory when that leaves it empty.
    fn abandon(&self) {
        let names = self.list().map(|l| l.names).unwrap_or_default();
        remove_files_of(&self.job_path, &names, self.me.index, &self.me.nonce);
        let _ = std::fs::remove_file(self.job_path.join(&self.my_name));
        // Fails, as it should, while anything else is inside.
        let _ = std::fs::remove_dir(&self.job_path);
    }
}

/// Removes the ready and done markers of the process (`index`, `nonce`) among `names`.
fn remove_files_of(job: &Path, names: &BTreeSet<String>, index: u32, nonce: &str) {
    for name in names {
        let belongs = match record::parse_name(name) {
            Name::Ready { index: i, nonce: n, .. } | Name::Done { index: i, nonce: n } => i == index && n == nonce,
            _ => false,
        };
        if belongs {
            let _ = std::fs::remove_file(job.join(name));
        }
    }
}

/// Leaves the run: marks this process done and, when every member has left (or its process on this machine is
/// gone), claims the directory's removal, renames it to a unique tombstone and removes that.
pub(crate) fn leave(joined: &Joined) -> Result<()> {
    let job = &joined.job_path;
    // Our directory is gone already (another member removed it, or someone cleaned up by hand).
    if inode(job).ok() != Some(joined.inode) {
        return Ok(());
    }
    let me = &joined.me;
    match record::write_marker(job, &record::done_name(me.index, &me.nonce)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("writing a done marker into", job, &e)),
    }
    let names: BTreeSet<String> = match std::fs::read_dir(job) {
        Ok(entries) => entries.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("listing the job directory", job, &e)),
    };
    let all_left = joined.roster.iter().all(|r| {
        names.contains(&record::done_name(r.index, &r.nonce))
            || !names.contains(&record::member_name(r.index, &r.nonce))
            || (!me.machine.is_empty() && r.machine == me.machine && !process_alive(r.pid, r.start_time))
    });
    if !all_left {
        return Ok(());
    }
    match record::claim(job, &record::closing_name(&joined.roster_hash)) {
        Ok(true) => {}
        Ok(false) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("claiming the removal of", job, &e)),
    }
    // Only the claimant gets here, once per directory; the directory at the path is still ours unless it vanished.
    if inode(job).ok() != Some(joined.inode) {
        return Ok(());
    }
    let tombstone = joined.directory.join(format!(".uform-removed-{}-{}", me.nonce, joined.roster_hash));
    match std::fs::rename(job, &tombstone) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("moving aside the finished job directory", job, &e)),
    }
    // A peer that lost the claim race may still create its claim file inside the tombstone: its path lookup of the
    // job directory can precede our rename while its exclusive create follows our removal of the winning claim. Such
    // a straggler is one system call already in flight, so a few retries see the directory empty.
    let mut attempt = 0;
    loop {
        match std::fs::remove_dir_all(&tombstone) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty && attempt < 50 => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(Error::io("removing the finished job directory", &tombstone, &e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Missing;

    #[test]
    fn missing_indices_are_ranges() {
        let mut m = Missing::default();
        m.add(0, 0);
        assert!(m.is_empty());
        m.add(1, 2);
        m.add(3, 5);
        m.add(5, 6);
        m.add(7, u32::MAX);
        assert_eq!(m.to_string(), "[1, 3-5, 7-4294967294]");
        assert_eq!(m.len(), 1 + 3 + u64::from(u32::MAX - 7));
        assert!(m.contains(4) && m.contains(u32::MAX - 1) && !m.contains(2) && !m.contains(u32::MAX));
        let mut pair = Missing::default();
        pair.add(1, 3);
        assert_eq!(pair.to_string(), "[1, 2]");
    }
}
