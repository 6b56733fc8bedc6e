//! The job directory on a shared directory, reached only through file descriptors.
//!
//! The mesh directory is opened once (following links: the caller chose that path) and the job directory is opened
//! relative to it with `O_NOFOLLOW | O_DIRECTORY` on every look, so a planted symbolic link is never followed and a
//! directory swapped in between two looks is checked again. Every record, marker and removal then works relative to
//! the job directory's descriptor: nothing is ever resolved through a path another user could change.
//!
//! Who may own what (see the trust model in the module documentation of [`super`]):
//!
//! - without `group`, the job directory must belong to this process's user and be writable by nobody else (no group
//!   or other write bit); a new one is made `0700` and records `0600`;
//! - with `group`, it must belong to that group, be writable by no other, and its owner must be this user, root or a
//!   member of the group; a new one is made `2770` (setgid, so every entry inherits the group) and records `0640`.
//!
//! A record counts only when its file belongs to the job directory's owner (or, with `group`, to this user, root or a
//! member of the group); any other is ignored and reported.

use super::users::{group_name, user_in_group, user_name, Group};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::io::{self, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The job directory `directory/job`, reached through the open mesh directory.
#[derive(Debug)]
pub(crate) struct JobDir {
    base: OwnedFd,
    name: CString,
    /// `directory/job`, for messages only.
    pub path: PathBuf,
    euid: u32,
    group: Option<Group>,
    /// Whether a uid belongs to `group`, looked up once.
    members: Mutex<HashMap<u32, bool>>,
}

/// The job directory as one look opened it: checked, and every operation of that look goes through it.
#[derive(Debug)]
pub(crate) struct Folder {
    fd: OwnedFd,
    /// (device, inode).
    pub id: (u64, u64),
    owner: u32,
}

/// What reading one record found.
pub(crate) enum Content {
    /// The file vanished since it was listed.
    Gone,
    /// Not counted, and why.
    Ignored(String),
    Bytes(Vec<u8>),
}

impl JobDir {
    /// Opens `directory` (which must exist) for the life of a membership.
    pub fn open_base(directory: &Path, job: &str, group: Option<Group>) -> Result<JobDir> {
        let path = directory.join(job);
        let c_directory = CString::new(directory.as_os_str().as_bytes())
            .map_err(|_| Error::invalid_argument("options.directory", "must not contain a NUL byte"))?;
        let name =
            CString::new(job).map_err(|_| Error::invalid_argument("options.job", "must not contain a NUL byte"))?;
        // SAFETY: a NUL-terminated path; the descriptor is owned from here on.
        let fd = unsafe { libc::open(c_directory.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            let action = if e.raw_os_error() == Some(libc::ENOTDIR) {
                "using as the mesh directory"
            } else {
                "opening the mesh directory"
            };
            return Err(Error::io(action, directory, &e));
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let base = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        Ok(JobDir { base, name, path, euid, group, members: Mutex::new(HashMap::new()) })
    }

    /// The job directory as it is now, checked; `None` when there is none.
    pub fn open(&self) -> Result<Option<Folder>> {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        let fd = unsafe { libc::openat(self.base.as_raw_fd(), self.name.as_ptr(), flags) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ENOENT) => Ok(None),
                Some(libc::ELOOP) | Some(libc::ENOTDIR) => Err(self.not_a_directory()),
                _ => Err(Error::io("opening the job directory", &self.path, &e)),
            };
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let st = fstat(fd.as_raw_fd()).map_err(|e| Error::io("reading the job directory", &self.path, &e))?;
        self.vet(&st, "job directory", &self.path)?;
        Ok(Some(Folder { fd, id: id_of(&st), owner: st.st_uid }))
    }

    /// Opens the job directory, making it first (`0700`, or `2770` with the group) when there is none.
    pub fn open_or_create(&self) -> Result<Folder> {
        for _ in 0..8 {
            if let Some(folder) = self.open()? {
                return Ok(folder);
            }
            // SAFETY: a valid directory descriptor and a NUL-terminated name.
            if unsafe { libc::mkdirat(self.base.as_raw_fd(), self.name.as_ptr(), 0o700) } == 0 {
                return self.finish_creating();
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(Error::io("creating the job directory", &self.path, &e));
            }
        }
        Err(Error::conflict(format!(
            "the job directory `{}` keeps appearing and vanishing: another process is creating and removing it",
            self.path.display()
        )))
    }

    /// Gives a directory this process just made (`0700` at most, so nobody else could have entered it) its group and
    /// mode.
    fn finish_creating(&self) -> Result<Folder> {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        let fd = unsafe { libc::openat(self.base.as_raw_fd(), self.name.as_ptr(), flags) };
        if fd < 0 {
            return Err(Error::io("opening the new job directory", &self.path, &io::Error::last_os_error()));
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let st = fstat(fd.as_raw_fd()).map_err(|e| Error::io("reading the job directory", &self.path, &e))?;
        if st.st_uid == self.euid {
            let mode = match &self.group {
                Some(group) => {
                    // SAFETY: a valid descriptor; -1 keeps the owner.
                    if unsafe { libc::fchown(fd.as_raw_fd(), u32::MAX as libc::uid_t, group.gid as libc::gid_t) } != 0 {
                        let e = io::Error::last_os_error();
                        return Err(Error::io(&format!("giving {group} the job directory"), &self.path, &e));
                    }
                    0o2770
                }
                None => 0o700,
            };
            // SAFETY: a valid descriptor.
            if unsafe { libc::fchmod(fd.as_raw_fd(), mode as libc::mode_t) } != 0 {
                let e = io::Error::last_os_error();
                return Err(Error::io("setting the mode of the job directory", &self.path, &e));
            }
        }
        let st = fstat(fd.as_raw_fd()).map_err(|e| Error::io("reading the job directory", &self.path, &e))?;
        self.vet(&st, "job directory", &self.path)?;
        Ok(Folder { fd, id: id_of(&st), owner: st.st_uid })
    }

    /// Refuses a directory of the run (the job directory, or a collective's store in it, named `what` at `path` in
    /// the message) that someone this process does not trust could write to.
    fn vet(&self, st: &libc::stat, what: &str, path: &Path) -> Result<()> {
        #[allow(clippy::unnecessary_cast)] // `mode_t` is 16 bits on some systems
        let mode = st.st_mode as u32 & 0o7777;
        let owner = st.st_uid;
        let refuse = |why: String| {
            Err(Error::conflict(format!(
                "the {what} `{}` (owner {}, group {}, mode {mode:04o}) {why}; choose another `job` or remove it",
                path.display(),
                user_name(owner),
                group_name(st.st_gid),
            )))
        };
        match &self.group {
            None if owner != self.euid => refuse(format!(
                "belongs to another user, not to this process's {}; a run's processes share one user unless `group` \
                 is set",
                user_name(self.euid)
            )),
            None if mode & 0o022 != 0 => refuse(
                "is writable by its group or others, so other users could add or remove records; without `group` it \
                 must be writable by its owner only"
                    .into(),
            ),
            Some(group) if st.st_gid != group.gid => {
                refuse(format!("does not belong to the `group` option's {group}, so its members could not share it"))
            }
            Some(_) if mode & 0o002 != 0 => {
                refuse("is writable by others, so users outside the group could add or remove records".into())
            }
            Some(group) if !self.trusted_user(owner) => {
                refuse(format!("belongs to a user who is not a member of the `group` option's {group}"))
            }
            _ => Ok(()),
        }
    }

    /// Whether a file of `owner` in the job directory `folder` counts.
    fn trusts(&self, folder: &Folder, owner: u32) -> bool {
        owner == folder.owner || (self.group.is_some() && self.trusted_user(owner))
    }

    /// With `group`: this user, root (who can write anywhere anyway) or a member of the group.
    fn trusted_user(&self, uid: u32) -> bool {
        uid == self.euid || uid == 0 || self.in_group(uid)
    }

    fn in_group(&self, uid: u32) -> bool {
        let Some(group) = &self.group else { return false };
        let mut members = self.members.lock().unwrap_or_else(|p| p.into_inner());
        *members.entry(uid).or_insert_with(|| user_in_group(uid, group.gid))
    }

    /// The conflict for a job path that is a link or no directory at all; nothing was written.
    fn not_a_directory(&self) -> Error {
        let what = match fstatat_nofollow(self.base.as_raw_fd(), &self.name) {
            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => {
                let target = readlinkat(self.base.as_raw_fd(), &self.name).unwrap_or_else(|_| "?".into());
                format!(
                    "is a symbolic link to `{target}` (owner {}); the mesh never follows a link there",
                    user_name(st.st_uid)
                )
            }
            Ok(st) => format!("is not a directory (owner {}, mode {:04o})", user_name(st.st_uid), st.st_mode & 0o7777),
            Err(e) => format!("cannot be opened as a directory ({e})"),
        };
        Error::conflict(format!(
            "the job directory `{}` {what}; nothing was written: choose another `job` or remove it",
            self.path.display()
        ))
    }

    /// Removes the job directory if it is still `folder` and empty; anything else leaves it as it is.
    pub fn remove_if_empty(&self, folder: &Folder) {
        let same = fstatat_nofollow(self.base.as_raw_fd(), &self.name).is_ok_and(|st| id_of(&st) == folder.id);
        if same {
            // SAFETY: a valid directory descriptor and a NUL-terminated name. Fails, as it should, when not empty.
            unsafe { libc::unlinkat(self.base.as_raw_fd(), self.name.as_ptr(), libc::AT_REMOVEDIR) };
        }
    }

    /// Opens the subdirectory `name` of `folder` that holds one collective group's rendezvous store, making it first
    /// when no process of the run has (`0700`, or `2770` with the group, as the job directory). Refused like the job
    /// directory: a link, a file, or a directory an untrusted user owns or others could write to.
    pub fn store(&self, folder: &Folder, name: &str) -> Result<OwnedFd> {
        let c = c_name(name).map_err(|e| Error::io("naming the collective store", &self.path, &e))?;
        let path = self.path.join(name);
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        let made = unsafe { libc::mkdirat(folder.fd.as_raw_fd(), c.as_ptr(), 0o700) } == 0;
        if !made && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
            return Err(Error::io("making the collective store", &path, &io::Error::last_os_error()));
        }
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        let fd = unsafe { libc::openat(folder.fd.as_raw_fd(), c.as_ptr(), flags) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(Error::conflict(format!(
                "the collective store `{}` is not a directory this run can use ({e}); the mesh never follows a link",
                path.display()
            )));
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        if made && self.group.is_some() {
            // Made `0700` by this process, so nobody else entered it yet; the group's members must write in it.
            // SAFETY: a valid descriptor.
            unsafe { libc::fchmod(fd.as_raw_fd(), 0o2770) };
        }
        let st = fstat(fd.as_raw_fd()).map_err(|e| Error::io("reading the collective store", &path, &e))?;
        self.vet(&st, "collective store", &path)?;
        Ok(fd)
    }

    /// Removes the collective store `name` of `folder` when it is empty; anything else leaves it as it is.
    pub fn remove_store(&self, folder: &Folder, name: &str) {
        if let Ok(name) = c_name(name) {
            // SAFETY: a valid directory descriptor and a NUL-terminated name. Fails, as it should, when not empty.
            unsafe { libc::unlinkat(folder.fd.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) };
        }
    }

    /// The mode of new records and markers.
    fn file_mode(&self) -> u32 {
        if self.group.is_some() {
            0o640
        } else {
            0o600
        }
    }

    /// Reads the record `name` of `folder` if its owner is trusted and it is a plain file.
    pub fn read(&self, folder: &Folder, name: &str) -> io::Result<Content> {
        let c_name = c_name(name)?;
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        let fd = unsafe { libc::openat(folder.fd.as_raw_fd(), c_name.as_ptr(), flags) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ENOENT) => Ok(Content::Gone),
                Some(libc::ELOOP) => Ok(Content::Ignored("it is a symbolic link".into())),
                _ => Err(e),
            };
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let st = fstat(file.as_raw_fd())?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Ok(Content::Ignored("it is not a regular file".into()));
        }
        if !self.trusts(folder, st.st_uid) {
            return Ok(Content::Ignored(format!(
                "its owner {} is not the job directory's owner {}{}",
                user_name(st.st_uid),
                user_name(folder.owner),
                match &self.group {
                    Some(group) => format!(" nor a member of {group}"),
                    None => String::new(),
                }
            )));
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(Content::Bytes(bytes))
    }

    /// Writes `folder/name` atomically: a uniquely named temporary file (`.tmp-<tag>-<n>`), written and synced,
    /// renamed into place, and the directory synced, so readers see all of it or nothing.
    pub fn write_atomically(&self, folder: &Folder, name: &str, tag: &str, bytes: &[u8]) -> io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let temporary = c_name(&format!(".tmp-{tag}-{}", COUNTER.fetch_add(1, Ordering::Relaxed)))?;
        let target = c_name(name)?;
        let dir = folder.fd.as_raw_fd();
        let mut file = self.create(dir, &temporary)?;
        let result = (|| {
            file.write_all(bytes)?;
            file.sync_all()?;
            drop(file);
            // SAFETY: a valid directory descriptor and NUL-terminated names.
            if unsafe { libc::renameat(dir, temporary.as_ptr(), dir, target.as_ptr()) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: a valid descriptor.
            if unsafe { libc::fsync(dir) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        })();
        if result.is_err() {
            // SAFETY: a valid directory descriptor and a NUL-terminated name.
            unsafe { libc::unlinkat(dir, temporary.as_ptr(), 0) };
        }
        result
    }

    /// Creates the empty marker `folder/name` only if nobody has: `Ok(true)` for the one caller that did.
    pub fn claim(&self, folder: &Folder, name: &str) -> io::Result<bool> {
        match self.create(folder.fd.as_raw_fd(), &c_name(name)?) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Creates the empty marker `folder/name`; an existing one is fine.
    pub fn mark(&self, folder: &Folder, name: &str) -> io::Result<()> {
        self.claim(folder, name).map(|_| ())
    }

    /// A new file, never through a link, with the mode records get (without `group` the umask can only narrow it).
    fn create(&self, dir: RawFd, name: &CStr) -> io::Result<std::fs::File> {
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        let fd = unsafe { libc::openat(dir, name.as_ptr(), flags, self.file_mode() as libc::c_uint) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        // The group must read records whatever this process's umask took away.
        if self.group.is_some() {
            // SAFETY: a valid descriptor.
            if unsafe { libc::fchmod(file.as_raw_fd(), self.file_mode() as libc::mode_t) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(file)
    }
}

impl Folder {
    /// The names in the directory, read through a fresh descriptor of it.
    pub fn list(&self) -> io::Result<Vec<String>> {
        // SAFETY: a valid descriptor; the duplicate is handed to fdopendir, which owns it until closedir.
        unsafe {
            let fd =
                libc::openat(self.fd.as_raw_fd(), c".".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            let dir = libc::fdopendir(fd);
            if dir.is_null() {
                let e = io::Error::last_os_error();
                libc::close(fd);
                return Err(e);
            }
            let mut names = Vec::new();
            let result = loop {
                *errno() = 0;
                let entry = libc::readdir(dir);
                if entry.is_null() {
                    let code = *errno();
                    break if code == 0 { Ok(()) } else { Err(io::Error::from_raw_os_error(code)) };
                }
                let name = CStr::from_ptr((*entry).d_name.as_ptr());
                if let Ok(name) = name.to_str() {
                    if name != "." && name != ".." {
                        names.push(name.to_string());
                    }
                }
            };
            libc::closedir(dir);
            result.map(|()| names)
        }
    }

    /// Whether `name` is in the directory.
    pub fn has(&self, name: &str) -> bool {
        c_name(name).is_ok_and(|n| fstatat_nofollow(self.fd.as_raw_fd(), &n).is_ok())
    }

    /// Removes `name`; a name already gone is fine.
    pub fn remove(&self, name: &str) {
        if let Ok(name) = c_name(name) {
            // SAFETY: a valid directory descriptor and a NUL-terminated name.
            unsafe { libc::unlinkat(self.fd.as_raw_fd(), name.as_ptr(), 0) };
        }
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn errno() -> &'static mut libc::c_int {
    // SAFETY: the calling thread's errno.
    unsafe { &mut *libc::__errno_location() }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn errno() -> &'static mut libc::c_int {
    // SAFETY: the calling thread's errno.
    unsafe { &mut *libc::__error() }
}

/// (device, inode): which directory this is, whatever its name.
#[allow(clippy::unnecessary_cast)] // the field types differ between systems
fn id_of(st: &libc::stat) -> (u64, u64) {
    (st.st_dev as u64, st.st_ino as u64)
}

fn c_name(name: &str) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    let mut st = MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: a valid descriptor and a buffer of the right size.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstat filled it.
    Ok(unsafe { st.assume_init() })
}

fn fstatat_nofollow(dir: RawFd, name: &CStr) -> io::Result<libc::stat> {
    let mut st = MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: a valid descriptor, a NUL-terminated name and a buffer of the right size.
    if unsafe { libc::fstatat(dir, name.as_ptr(), st.as_mut_ptr(), libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstatat filled it.
    Ok(unsafe { st.assume_init() })
}

fn readlinkat(dir: RawFd, name: &CStr) -> io::Result<String> {
    let mut buffer = vec![0u8; 4096];
    // SAFETY: a valid descriptor, a NUL-terminated name and a buffer valid for its length.
    let n = unsafe { libc::readlinkat(dir, name.as_ptr(), buffer.as_mut_ptr().cast(), buffer.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buffer.truncate(n as usize);
    Ok(String::from_utf8_lossy(&buffer).into_owned())
}
