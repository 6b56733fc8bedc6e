//! Joining and leaving a job directory: the protocol the module documentation describes.

use super::folder::{Content, Folder, JobDir};
use super::host::process_alive;
use super::options::Rendezvous;
use super::record::{self, Name, Record};
use super::users;
use crate::error::{Error, Result};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
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
    /// The open mesh directory and the job's name in it.
    pub dir: JobDir,
    /// (device, inode) of the job directory this process joined, so it never touches another run's directory.
    pub id: (u64, u64),
    pub me: Record,
    /// One record per index, in index order.
    pub roster: Vec<Record>,
    pub roster_hash: String,
}

struct Watch<'a> {
    rendezvous: &'a Rendezvous,
    dir: JobDir,
    /// The job directory as the latest look opened it; `None` when it was not there.
    folder: Option<Folder>,
    me: Record,
    my_name: String,
    /// Parsed records by file name; a name is written once, so a cached parse never goes stale.
    cache: HashMap<String, Record>,
    /// Records that never count (another owner, a link, not a plain file), by file name, with the reason.
    ignored: BTreeMap<String, String>,
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
    let group = rendezvous.group.as_deref().map(users::resolve_group).transpose()?;
    let dir = JobDir::open_base(&rendezvous.directory, &rendezvous.job, group)?;
    let my_name = record::member_name(me.index, &me.nonce);
    let mut watch = Watch {
        rendezvous,
        dir,
        folder: None,
        me,
        my_name,
        cache: HashMap::new(),
        ignored: BTreeMap::new(),
        departed: BTreeMap::new(),
        last_liveness: None,
        confirmed: None,
    };
    let deadline = Instant::now() + rendezvous.timeout;
    // Nothing of this process exists until the job directory does, and a job directory that is a link or that
    // someone else could write to is refused before anything is written; from then on every failure, whatever call
    // it comes from, takes this process's files along (and the directory when that empties it).
    watch.folder = Some(watch.dir.open_or_create()?);
    match watch.meet(deadline, shape_check) {
        Ok((roster, roster_hash)) => match watch.folder.as_ref().map(|f| f.id) {
            Some(id) => Ok(Joined { dir: watch.dir, id, me: watch.me, roster, roster_hash }),
            None => {
                watch.abandon();
                Err(Error::internal("the job directory vanished as the run formed"))
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

impl Watch<'_> {
    fn io(&self, action: &str, err: &std::io::Error) -> Error {
        Error::io(action, &self.dir.path, err)
    }

    /// The job directory of the latest look, which a look that goes on to act on it always has.
    fn folder(&self) -> Result<&Folder> {
        self.folder.as_ref().ok_or_else(|| Error::internal("the mesh acted on a job directory it had not opened"))
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

    fn write_own(&mut self) -> Result<()> {
        let text = serde_json::to_vec_pretty(&self.me).map_err(|e| Error::internal(format!("a mesh record: {e}")))?;
        for attempt in 0..2 {
            if self.folder.is_none() || attempt > 0 {
                // The directory was removed under us (the last process of an earlier run leaving): make it again.
                self.folder = Some(self.dir.open_or_create()?);
                self.confirmed = None;
            }
            match self.dir.write_atomically(self.folder()?, &self.my_name, &self.me.nonce, &text) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempt == 0 => continue,
                Err(e) => return Err(self.io("writing this process's mesh record into", &e)),
            }
        }
        unreachable!("the second attempt returns")
    }

    /// Lists the directory by opening it again (a shared file system may cache an open handle's view); a job
    /// directory that became a link or writable by others in the meantime is refused.
    fn list(&mut self) -> Result<Listing> {
        let mut names = BTreeSet::new();
        let mut done = HashSet::new();
        self.folder = self.dir.open()?;
        let Some(folder) = &self.folder else { return Ok(Listing { names, done }) };
        let listed = match folder.list() {
            Ok(listed) => listed,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Listing { names, done }),
            Err(e) => return Err(self.io("listing the job directory", &e)),
        };
        for name in listed {
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
        self.ignored.retain(|name, _| listing.names.contains(name));
        let Some(folder) = &self.folder else { return Ok(()) };
        for name in &listing.names {
            let new = !self.cache.contains_key(name) && !self.ignored.contains_key(name);
            if new && matches!(record::parse_name(name), Name::Member { .. }) {
                let path = self.dir.path.join(name);
                match self.dir.read(folder, name) {
                    Ok(Content::Gone) => {}
                    Ok(Content::Ignored(why)) => {
                        self.ignored.insert(name.clone(), why);
                    }
                    Ok(Content::Bytes(bytes)) => {
                        self.cache.insert(name.clone(), record::parse_record(&path, &bytes)?);
                    }
                    Err(e) => return Err(Error::io("reading the mesh record", &path, &e)),
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
            remove_files_of(folder, &listing.names, r.index, &r.nonce);
            folder.remove(&name);
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
            let folder = self.folder()?;
            self.dir.mark(folder, &name).map_err(|e| self.io("writing a ready marker into", &e))?;
            if let Some((old, _)) = &self.confirmed {
                folder.remove(&record::ready_name(self.me.index, &self.me.nonce, old));
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
        let path = self.dir.path.join(name);
        if r.count != me.count {
            return Err(Error::conflict(format!(
                "peers of job `{}` disagree on {}: this process {} at index {} says {}, {} at index {} says {} (record \
                 `{}`)",
                me.job,
                crate::path::name("host_domain_count"),
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
                "peers of job `{}` disagree on {}: this process {} at index {} has {}, {} at index {} has {} (0 means \
                 absent; pass the same value everywhere, or leave it absent everywhere) (record `{}`)",
                me.job,
                crate::path::name("gpus_per_multimem_domain"),
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
            claims.iter().map(|(name, r)| format!("{} in `{}`", r.who(), self.dir.path.join(name).display())).collect();
        Error::conflict(format!(
            "host domain index {index} of job `{}` is claimed by {} processes: {}; every process of a run needs its \
             own {}, and two concurrent runs need different `job` names (if one of these processes belongs to an \
             earlier run that was killed on another machine, remove its record)",
            self.me.job,
            claims.len(),
            described.join(" and "),
            crate::path::name("host_domain_index")
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
        if !self.ignored.is_empty() {
            let ignored: Vec<String> = self
                .ignored
                .iter()
                .map(|(name, why)| format!("`{}`: {why}", self.dir.path.join(name).display()))
                .collect();
            message += &format!("; records ignored, never counted as peers: {}", ignored.join("; "));
        }
        Error::timeout(message)
    }

    /// Removes this process's record and markers, and the job directory when that leaves it empty.
    fn abandon(&mut self) {
        // A job directory that is gone, or that is now a link or open to others, holds nothing to take back.
        let Ok(Some(folder)) = self.dir.open() else { return };
        let names: BTreeSet<String> = folder.list().unwrap_or_default().into_iter().collect();
        remove_files_of(&folder, &names, self.me.index, &self.me.nonce);
        folder.remove(&self.my_name);
        // Fails, as it should, while anything else is inside.
        self.dir.remove_if_empty(&folder);
    }
}

/// Removes the ready and done markers of the process (`index`, `nonce`) among `names`.
fn remove_files_of(folder: &Folder, names: &BTreeSet<String>, index: u32, nonce: &str) {
    for name in names {
        let belongs = match record::parse_name(name) {
            Name::Ready { index: i, nonce: n, .. } | Name::Done { index: i, nonce: n } => i == index && n == nonce,
            _ => false,
        };
        if belongs {
            folder.remove(name);
        }
    }
}

/// Leaves the run: marks this process done and, when every member has left (or its process on this machine is
/// gone), claims the cleanup and removes this run's entries by name, then the job directory if that empties it.
pub(crate) fn leave(joined: &Joined) -> Result<()> {
    let dir = &joined.dir;
    let me = &joined.me;
    // Everything below goes through this one descriptor of the directory this process joined: if it was removed (by
    // another member, or by hand), every call fails as not found and nothing lands in a directory made since.
    let folder = match dir.open()? {
        Some(folder) if folder.id == joined.id && folder.has(&record::member_name(me.index, &me.nonce)) => folder,
        _ => return Ok(()),
    };
    let not_found = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    match dir.mark(&folder, &record::done_name(me.index, &me.nonce)) {
        Ok(()) => {}
        Err(e) if not_found(&e) => return Ok(()),
        Err(e) => return Err(Error::io("writing a done marker into", &dir.path, &e)),
    }
    let names: BTreeSet<String> = match folder.list() {
        Ok(names) => names.into_iter().collect(),
        Err(e) if not_found(&e) => return Ok(()),
        Err(e) => return Err(Error::io("listing the job directory", &dir.path, &e)),
    };
    let all_left = joined.roster.iter().all(|r| {
        names.contains(&record::done_name(r.index, &r.nonce))
            || !names.contains(&record::member_name(r.index, &r.nonce))
            || r.gone_from(&me.machine)
    });
    if !all_left {
        return Ok(());
    }
    let closing = record::closing_name(&joined.roster_hash);
    match dir.claim(&folder, &closing) {
        Ok(true) => {}
        Ok(false) => return Ok(()),
        Err(e) if not_found(&e) => return Ok(()),
        Err(e) => return Err(Error::io("claiming the removal of", &dir.path, &e)),
    }
    // Only this run's entries go, by name: the records first, so a process of a re-run arriving meanwhile never sees
    // a member without its markers, then the markers, then the claim. Anything else stays, and so does the directory.
    let members: HashSet<(u32, &str)> = joined.roster.iter().map(|r| (r.index, r.nonce.as_str())).collect();
    for r in &joined.roster {
        folder.remove(&record::member_name(r.index, &r.nonce));
    }
    for name in folder.list().unwrap_or_default() {
        let ours = match record::parse_name(&name) {
            Name::Ready { index, nonce, .. } | Name::Done { index, nonce } => members.contains(&(index, &nonce)),
            _ => false,
        };
        if ours {
            folder.remove(&name);
        }
    }
    folder.remove(&closing);
    dir.remove_if_empty(&folder);
    Ok(())
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
