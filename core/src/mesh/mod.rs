//! Meshes: the processes of one run meet through a directory they all see.
//!
//! # Without peers
//!
//! `hostDomainCount` absent or 1 means one process and no peers: [`Mesh::bootstrap`] returns at once and touches no
//! file; `directory`, `job` and `timeoutSeconds` are ignored (an explicit zero is still an invalid argument, and
//! `hostDomainIndex` must be 0 or absent).
//!
//! # With peers
//!
//! `directory` (which must exist) and `job` are required. An absent `hostDomainIndex` derives 0, as the IDL says
//! (in C a zero field means absent, so index 0 must be expressible that way); two processes that both take 0
//! meet as a duplicate index, a conflict error naming both. `job` names one entry of
//! `directory`: not empty, not `.` or `..`, no `/`, `\` or NUL. Two runs that overlap in time must use different
//! job names; two different jobs in one directory never see each other's files.
//!
//! `directory` is opened once and the job directory is reached relative to it, never through a link: see *Trust*.
//! Each process, in `directory/job/`:
//!
//! 1. removes the records of this machine whose process is gone (see *Stale runs*), then writes its record
//!    `member-<index>-<nonce>.json` atomically (a uniquely named temporary file in the same directory, fsync,
//!    rename, fsync of the directory): run identity (a random per-process nonce), host name, machine identity,
//!    pid, process start time, index, count, `gpusPerMultimemDomain` and its GPU members (vendor, class, memory,
//!    multicast support);
//! 2. polls by listing the directory anew each time (no inotify, no cached handle: shared file systems cache),
//!    with a pause that starts at 1 ms, doubles while nothing changes and stops growing at 50 ms, measured on the
//!    monotonic clock. Each record is parsed once, by file name, since nothing is rewritten in place;
//! 3. on every look, cross-checks the live records: two claiming one index are a conflict naming both (host, pid)
//!    and both files; a different `hostDomainCount` or `gpusPerMultimemDomain` is a conflict naming both values;
//! 4. once every index has a record, the roster (the set of index and nonce pairs) is the run's identity: the process
//!    writes the marker `ready-<index>-<nonce>-<roster hash>` and returns once every member has written the same
//!    marker. A record can only count when its process confirms a roster that contains the fresh nonces of the
//!    processes now joining, which no process of an earlier run can do;
//! 5. after `timeoutSeconds` (default 120) it fails with a timeout error naming the indices that never joined, runs
//!    of three or more as `first-last` (and those that joined but never confirmed, with the reason when their process
//!    was found gone). A look costs what the directory holds, never `hostDomainCount`.
//!
//! Every failure (a timeout, a conflict, a write or a listing that fails: a read-only or full file system) removes
//! this process's record and markers, and the job directory when that leaves it empty, so a failed bootstrap leaves
//! nothing behind. A process that finds a conflict keeps its record for 100 ms first, so its
//! peers, polling at most 50 ms apart, report the same conflict instead of waiting for the timeout.
//!
//! # Stale runs
//!
//! A job directory left by a killed or finished earlier run is never taken for live peers:
//!
//! - **Gone processes of this machine.** A record whose machine identity (kernel boot id and pid namespace) is this
//!   process's and whose process is gone (no such pid, a zombie, or a different start time: the pid was reused) is
//!   stale: any joining process removes it with its markers, first before writing its own record and then every
//!   25 ms while it waits. So a re-run on the same machines after a kill needs nothing by hand.
//! - **Processes that left.** A record with a `done-<index>-<nonce>` marker belongs to a process that has left its
//!   run: it never conflicts with anyone, and it only fills its index when no live record claims it and its own
//!   ready marker confirms the roster being formed (true of a peer of this run that finished early, never of an
//!   earlier run). Such leftovers of another machine stay until removed by hand: a run removes only its own entries.
//! - **Records that cannot be proven stale** (another machine, not marked done) count as live. They can never
//!   complete a run, since their process would have to confirm the new nonces; at worst peers wait until the new
//!   process of that index arrives (on the old record's machine it removes it), or a conflict error names the file
//!   to remove when the index, count or GPUs per domain collide.
//!
//! # Leaving
//!
//! [`Mesh::free`] (or dropping the last clone without it) writes `done-<index>-<nonce>`, through a descriptor of the
//! job directory it joined (device and inode checked, its own record still there), so nothing lands in a directory
//! made since. A process that then finds every member of its roster done, or gone from this machine, claims
//! `closing-<roster hash>` with an exclusive create (one winner) and removes, by name, only this run's entries: the
//! members' records first (so a re-run with the same job name arriving meanwhile never sees a member without its
//! markers), then their ready and done markers, then the claim, and last the job directory when that left it empty
//! and it is still the one joined. Anything else in it (another user's file, an earlier run's leftovers) stays, and
//! so does the directory. The directory is never emptied while a member is still joining: a member writes its done
//! marker only after its own bootstrap returned, and a bootstrap returns only after every member confirmed.
//!
//! Leaving does not wait for peers; a peer that dies after joining is not noticed by the others (the mesh holds no
//! connection), and the last survivor on its machine removes the directory as if it had left.
//!
//! # Trust
//!
//! A run's processes must see one directory and share one user, or with the `group` option one group; nobody else can
//! join, read its records or break it:
//!
//! - the job directory must be a real directory: a symbolic link (or any other file) at `directory/job` is a conflict
//!   naming the path and what it points to, and nothing is written anywhere;
//! - without `group` it must belong to this process's user and be writable by nobody else; a new one is made `0700`
//!   and its records and markers `0600`. One that belongs to another user, or is writable by its group or others, is
//!   a conflict naming its owner and mode, and nothing is written;
//! - with `group` (a group name or a numeric gid this process belongs to) it must belong to that group, be writable
//!   by no one outside it, and be owned by this user, root or a member; a new one is made `2770` (setgid, so every
//!   entry inherits the group) and records `0640`. Processes of different users of the group then meet. In a
//!   sticky directory such as `/tmp` only the job directory's owner may remove it, so a run whose last member is
//!   another user leaves the empty job directory behind, for the next run of that job to reuse; a directory
//!   writable by the group avoids that;
//! - a record counts only when its file belongs to the job directory's owner (with `group`: to this user, root or a
//!   member of the group) and is a plain file; any other is ignored, never counted as a peer, and named in the
//!   timeout error;
//! - files are read, written and removed relative to a descriptor of the job directory opened without following
//!   links and checked on every look, so a directory swapped in between two looks is checked again.
//!
//! The mesh does not protect against a process of the same user (or, with `group`, of a member of the group): it can
//! read and remove records and join or break the run. Nor does it authenticate peers on other machines: a shared file
//! system's idea of a uid is what it checks. Markers carry no owner check beyond the job directory's permissions.
//!
//! # Life cycle
//!
//! A mesh borrows its executor from bootstrap until it is freed or dropped, so [`crate::Executor::free`] under a live
//! mesh is an in-use error; free the mesh first. Trainers borrow the mesh through [`Mesh::borrow`], and freeing a
//! mesh while a lease lives is an in-use error.
//!
//! # Description
//!
//! Every record carries its GPUs' UUIDs, multicast support (the attribute, and whether a multicast object could
//! really be made) and NVLink fabric (NVML: state, cluster UUID, clique id). One physical GPU claimed twice, by two
//! ranks or by one, is a conflict naming both. Domains and the tier are a pure function of the records
//! (`domains`): `SwitchReduced` when every GPU of the run can multicast and its fabric registration is complete,
//! domains then being the groups of GPUs sharing a cluster UUID and clique id; otherwise `PeerRead`, one domain per
//! host. `gpusPerMultimemDomain`, when given, splits each group into domains of that many GPUs (every host must pass
//! the same value; a group it does not divide is an invalid argument; a larger value leaves a group whole); absent,
//! the groups are the domains, so one process per GPU (torchrun) still gets one domain per NVLink group.
//! `multimemDomainCount` counts the domains (0 without GPUs) and `gpusPerMultimemDomain` reports the largest.

mod domains;
mod folder;
mod host;
mod options;
mod record;
mod rendezvous;
mod users;

pub use options::mesh_options_from_lookup;

use crate::collective::{Collective, Solo};
use crate::error::Result;
use crate::executor::Executor;
use crate::handle::{Lease, Lifecycle};
use crate::types::*;
use record::{GpuRecord, Record};
use std::sync::{Arc, Mutex};

/// One process's place among the processes of a run. Cloning shares the same mesh.
#[derive(Clone, Debug)]
pub struct Mesh {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    lifecycle: Arc<Lifecycle>,
    description: MeshDescription,
    /// Collective groups made on this mesh so far: each gets a store of its own.
    groups: std::sync::atomic::AtomicU64,
    /// Present until the mesh is freed or dropped.
    membership: Mutex<Option<Membership>>,
}

#[derive(Debug)]
struct Membership {
    /// `None` without peers.
    joined: Option<rendezvous::Joined>,
    /// The mesh's `timeoutSeconds`, which bounds every wait of its collectives too.
    timeout: std::time::Duration,
    /// Keeps the executor from being freed under the mesh.
    _executor: Lease,
}

impl Mesh {
    /// Joins this process to the run's mesh, once every process has joined. See the module documentation.
    pub fn bootstrap(executor: &Executor, options: MeshOptions) -> Result<Mesh> {
        let plan = options::plan(&options)?;
        let lease = Lease::take(executor.lifecycle(), "Executor", "Mesh.bootstrap")?;
        let gpus = executor.devices()?;
        let gpus_per_domain = plan.gpus_per_multimem_domain;
        let my_gpus: Vec<GpuRecord> = gpus.iter().map(GpuRecord::new).collect();
        let timeout = plan.rendezvous.as_ref().map_or(std::time::Duration::ZERO, |r| r.timeout);
        let (description, joined) = match &plan.rendezvous {
            None => {
                let me = host::ProcessIdentity::current();
                let member = domains::Member { index: plan.index, host: &me.host, pid: me.pid, gpus: &my_gpus };
                (shape(plan.index, 1, &gpus, gpus_per_domain, &[member])?, None)
            }
            Some(rendezvous) => {
                let me_process = host::ProcessIdentity::current();
                let me = Record {
                    version: record::RECORD_VERSION,
                    job: rendezvous.job.clone(),
                    nonce: format!("{:016x}", host::nonce()),
                    host: me_process.host,
                    machine: me_process.machine,
                    pid: me_process.pid,
                    start_time: me_process.start_time,
                    index: plan.index,
                    count: plan.count,
                    gpus_per_multimem_domain: gpus_per_domain.unwrap_or(0),
                    gpus: my_gpus,
                };
                let check = |roster: &[Record]| {
                    shape(plan.index, plan.count, &gpus, gpus_per_domain, &members(roster)).map(|_| ())
                };
                let joined = rendezvous::join(rendezvous, me, &check)?;
                let description = shape(plan.index, plan.count, &gpus, gpus_per_domain, &members(&joined.roster))?;
                (description, Some(joined))
            }
        };
        Ok(Mesh {
            inner: Arc::new(Inner {
                lifecycle: Arc::new(Lifecycle::new()),
                description,
                groups: Default::default(),
                membership: Mutex::new(Some(Membership { joined, timeout, _executor: lease })),
            }),
        })
    }

    /// Reports the mesh's shape and this process's place in it.
    pub fn describe(&self) -> Result<MeshDescription> {
        self.inner.lifecycle.check("Mesh", "describe")?;
        Ok(self.inner.description.clone())
    }

    /// Lends the mesh to a trainer: the mesh cannot be freed while the lease lives.
    pub fn borrow(&self) -> Result<Lease> {
        Lease::take(&self.inner.lifecycle, "Mesh", "borrow")
    }

    /// Connects a new collective group of the mesh's processes: every process must call it, in the same order
    /// relative to its other groups (a trainer across processes makes one). Without peers the group is [`Solo`].
    ///
    /// The group meets through a store of its own in the job directory (`collective-<roster hash>-<n>`, made and
    /// checked like the job directory, emptied by each process once all have connected and then removed by rank 0),
    /// and listens on 127.0.0.1 when every member runs on this machine, or on this host's name otherwise. Every wait
    /// is bounded by the mesh's `timeoutSeconds`; a failure names the ranks whose process is known to be gone.
    pub fn collective(&self) -> Result<Arc<dyn Collective>> {
        self.inner.lifecycle.check("Mesh", "collective")?;
        let membership = self.inner.membership.lock().unwrap_or_else(|p| p.into_inner());
        let Some(membership) = membership.as_ref() else {
            return Err(crate::error::Error::freed("Mesh", "collective"));
        };
        let Some(joined) = &membership.joined else { return Ok(Arc::new(Solo)) };
        crate::collective::available()?;
        let n = self.inner.groups.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("collective-{}-{n}", joined.roster_hash);
        let folder = joined.dir.open()?.filter(|f| f.id == joined.id).ok_or_else(|| {
            crate::error::Error::conflict(format!(
                "the job directory `{}` this process joined is gone or was replaced",
                joined.dir.path.display()
            ))
        })?;
        let store = joined.dir.store(&folder, &name)?;
        let me = host::ProcessIdentity::current();
        let local = joined.roster.iter().all(|r| r.machine == me.machine);
        let address = if local { "127.0.0.1".to_string() } else { joined.me.host.clone() };
        let (roster, machine) = (joined.roster.clone(), me.machine);
        let gone: crate::collective::GoneRanks =
            Arc::new(move || roster.iter().filter(|r| r.gone_from(&machine)).map(|r| r.index as usize).collect());
        let path = std::path::PathBuf::from(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&store)));
        let (rank, size) = (self.inner.description.host_domain_index, self.inner.description.host_domain_count);
        let (rank, size, timeout) = (rank as usize, size as usize, membership.timeout);
        let meeting = crate::collective::Meeting { store: &path, address: &address, rank, size, timeout, gone };
        let connected = crate::collective::connect(meeting);
        // Once every process passed the barrier every store file is gone; after a failure only this process's are.
        if connected.is_err() || rank == 0 {
            joined.dir.remove_store(&folder, &name);
        }
        connected
    }

    /// Leaves the mesh and returns the executor's borrow. A second call does nothing; freeing while a trainer
    /// borrows the mesh is an in-use error. Removing the job directory is the last member's job.
    /// Whether `free` has run: every later call but `free` fails as freed.
    pub fn is_freed(&self) -> bool {
        self.inner.lifecycle.is_freed()
    }

    pub fn free(&self) -> Result<()> {
        if !self.inner.lifecycle.begin_free("Mesh", ("trainer", "trainers"))? {
            return Ok(());
        }
        self.inner.leave()
    }
}

impl Inner {
    fn leave(&self) -> Result<()> {
        let membership = self.membership.lock().unwrap_or_else(|p| p.into_inner()).take();
        match membership {
            Some(Membership { joined: Some(joined), .. }) => rendezvous::leave(&joined),
            _ => Ok(()),
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Best effort, as `free` would; a panic must not escape a destructor.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.leave()));
    }
}

/// The members of a roster, as the domain grouping sees them.
fn members(roster: &[Record]) -> Vec<domains::Member<'_>> {
    roster.iter().map(|r| domains::Member { index: r.index, host: &r.host, pid: r.pid, gpus: &r.gpus }).collect()
}

/// The run's shape from the GPUs of every member; this host's devices are `gpus`.
fn shape(
    index: u32,
    count: u32,
    gpus: &[GpuDevice],
    gpus_per_domain: Option<u32>,
    members: &[domains::Member],
) -> Result<MeshDescription> {
    domains::check_unique_gpus(members)?;
    let found = domains::group(members, gpus_per_domain)?;
    Ok(MeshDescription {
        host_domain_index: index,
        host_domain_count: count,
        gpus: gpus.to_vec(),
        gpus_per_multimem_domain: found.gpus_per_domain(),
        multimem_domain_count: found.sizes.len() as u32,
        multimem_tier: found.tier,
    })
}

/// Builds mesh options from the environment of torchrun or SLURM; `None` when neither launched this process.
/// Only the index, the count and the job are filled in; `directory` stays absent for the caller to set.
pub fn mesh_options_from_environment() -> Result<Option<MeshOptions>> {
    mesh_options_from_lookup(|name| std::env::var(name).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn gpu(multicast: bool, uuid: &str) -> GpuRecord {
        GpuRecord {
            vendor: 1,
            vendor_ordinal: 0,
            gpu_class: None,
            compute_units: 132,
            memory_bytes: 1 << 37,
            name: "H200".into(),
            multicast_attribute: true,
            multicast,
            uuid: Some(uuid.into()),
            fabric: Some(crate::devices::fabric::Fabric::new(3, 0, [0; 16], 0)),
        }
    }

    fn one<'a>(host: &'a str, gpus: &'a [GpuRecord]) -> domains::Member<'a> {
        domains::Member { index: 0, host, pid: 1, gpus }
    }

    #[test]
    fn mesh_shape_without_gpus() {
        let d = shape(0, 4, &[], None, &[one("a", &[])]).unwrap();
        assert_eq!((d.gpus_per_multimem_domain, d.multimem_domain_count), (0, 0));
        assert_eq!(d.multimem_tier, MultimemTier::PeerRead);
        let d = shape(0, 4, &[], Some(4), &[one("a", &[])]).unwrap();
        assert_eq!(d.multimem_domain_count, 0);
    }

    #[test]
    fn mesh_shape_tiers_and_domains() {
        let all = [gpu(true, "GPU-0"), gpu(true, "GPU-1"), gpu(true, "GPU-2"), gpu(true, "GPU-3")];
        let d = shape(1, 2, &[], Some(2), &[one("a", &all)]).unwrap();
        assert_eq!((d.multimem_domain_count, d.multimem_tier), (2, MultimemTier::SwitchReduced));
        assert_eq!(d.gpus_per_multimem_domain, 2);
        let d = shape(1, 2, &[], None, &[one("a", &all)]).unwrap();
        assert_eq!((d.multimem_domain_count, d.gpus_per_multimem_domain), (1, 4));
        let mixed = [gpu(true, "GPU-0"), gpu(false, "GPU-1")];
        assert_eq!(shape(0, 1, &[], Some(2), &[one("a", &mixed)]).unwrap().multimem_tier, MultimemTier::PeerRead);
        let err = shape(0, 1, &[], Some(3), &[one("a", &all)]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(err.message().starts_with("`options.gpus_per_multimem_domain`"), "{err}");
        let twice = [gpu(true, "GPU-0"), gpu(true, "GPU-0")];
        assert_eq!(shape(0, 1, &[], None, &[one("a", &twice)]).unwrap_err().kind(), ErrorKind::Conflict);
    }

    #[test]
    fn mesh_without_peers_borrows_the_executor() {
        let executor = Executor::for_ram(Default::default()).unwrap();
        let mesh = Mesh::bootstrap(&executor, MeshOptions::default()).unwrap();
        let d = mesh.describe().unwrap();
        assert_eq!((d.host_domain_index, d.host_domain_count, d.multimem_domain_count), (0, 1, 0));
        assert_eq!(executor.free().unwrap_err().kind(), ErrorKind::InUse);
        let lease = mesh.borrow().unwrap();
        assert_eq!(mesh.free().unwrap_err().kind(), ErrorKind::InUse);
        drop(lease);
        mesh.free().unwrap();
        mesh.free().unwrap();
        assert_eq!(mesh.describe().unwrap_err().kind(), ErrorKind::FreedHandle);
        assert_eq!(mesh.borrow().unwrap_err().kind(), ErrorKind::FreedHandle);
        executor.free().unwrap();
        let err = Mesh::bootstrap(&executor, MeshOptions::default()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::FreedHandle);
    }

    #[test]
    fn mesh_dropped_returns_the_executor() {
        let executor = Executor::for_ram(Default::default()).unwrap();
        let mesh = Mesh::bootstrap(&executor, MeshOptions::default()).unwrap();
        let clone = mesh.clone();
        drop(mesh);
        assert_eq!(executor.free().unwrap_err().kind(), ErrorKind::InUse);
        drop(clone);
        executor.free().unwrap();
    }
}
