//! Collectives through gloo, the library under torch.distributed's CPU backend: TCP pairs between every two
//! processes, ring all-reduce, a rendezvous through a file store.
//!
//! # Loading
//!
//! gloo is C++; `core/build.rs` builds the smallest C interface over it (`core/gloo/shim.cc`) into a shared library
//! linked against `libgloo.so.0`, and core carries its bytes. The first group this process makes copies them into an
//! anonymous memory file (`memfd_create`, so nothing is ever written to disk or left behind) and loads that with the
//! dynamic loader, which then loads libgloo and its dependencies (libhiredis, libibverbs). So core itself, and every
//! package built from it, links no gloo: a process that never trains across processes runs where gloo is absent,
//! and one that does fails with an unavailable error naming the package to install (Debian and Ubuntu: `libgloo0`).
//!
//! # A group
//!
//! [`Group::connect`] meets the other processes through a file store, a directory every process sees (the mesh
//! gives one inside its job directory): each process writes its pairs' addresses, connects to every other, and once
//! all have connected (a barrier) removes the files it wrote, so the directory is left empty. Every wait is bounded
//! by the group's timeout. Each process listens on the address it is given, on ports the kernel picks: a run across
//! hosts must let every host reach every other on any TCP port.

use super::Collective;
use crate::error::{Error, Result};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

type Connect = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    c_int,
    c_int,
    i64,
    *mut *mut c_void,
    *mut c_char,
    usize,
) -> c_int;
type AllReduce = unsafe extern "C" fn(*mut c_void, *mut f32, usize, *mut c_char, usize) -> c_int;
type AllGather = unsafe extern "C" fn(*mut c_void, *const u64, usize, *mut u64, *mut c_char, usize) -> c_int;
type Barrier = unsafe extern "C" fn(*mut c_void, *mut c_char, usize) -> c_int;
type Free = unsafe extern "C" fn(*mut c_void);

/// The shim's functions, resolved once per process.
struct Shim {
    connect: Connect,
    all_reduce: AllReduce,
    all_gather: AllGather,
    barrier: Barrier,
    free: Free,
    /// Keeps the functions above mapped for the life of the process.
    _library: libloading::Library,
}

#[cfg(not(uform_gloo_missing))]
const SHIM: std::result::Result<&[u8], &str> = Ok(include_bytes!(concat!(env!("OUT_DIR"), "/libuform_gloo.so")));
#[cfg(uform_gloo_missing)]
const SHIM: std::result::Result<&[u8], &str> = Err(include_str!(concat!(env!("OUT_DIR"), "/gloo-missing.txt")));

/// What to install when the shim cannot load.
const INSTALL: &str = "install gloo's shared library (Debian and Ubuntu: `apt-get install libgloo0`)";

fn shim() -> Result<&'static Shim> {
    static SHIM_LOADED: OnceLock<std::result::Result<Shim, String>> = OnceLock::new();
    SHIM_LOADED.get_or_init(load).as_ref().map_err(|why| Error::unavailable(why.clone()))
}

fn load() -> std::result::Result<Shim, String> {
    let bytes = SHIM.map_err(|why| {
        format!("this build of UForm has no gloo shim, so it cannot train across processes (its build said: {why})")
    })?;
    // SAFETY: a NUL-terminated name and valid flags; the descriptor returned is owned below.
    let fd = unsafe { libc::memfd_create(c"uform-gloo".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("could not make a memory file for the gloo shim: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` was just returned by memfd_create and nothing else owns it.
    let mut file = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    std::io::Write::write_all(&mut file, bytes).map_err(|e| format!("could not write the gloo shim: {e}"))?;
    let path = format!("/proc/self/fd/{fd}");
    // SAFETY: the bytes are the shim core/build.rs built from core/gloo/shim.cc; its initialisers are libstdc++'s
    // and libgloo's own, which run no code of ours and have no preconditions.
    let library = unsafe { libloading::Library::new(&path) }
        .map_err(|e| format!("the trainer across processes needs gloo, which did not load ({e}): {INSTALL}"))?;
    drop(file);
    // SAFETY: each symbol is looked up with the signature shim.cc declares for it.
    unsafe {
        let connect = *library.get::<Connect>(b"uform_gloo_connect\0").map_err(|e| e.to_string())?;
        let all_reduce = *library.get::<AllReduce>(b"uform_gloo_all_reduce_f32\0").map_err(|e| e.to_string())?;
        let all_gather = *library.get::<AllGather>(b"uform_gloo_all_gather_u64\0").map_err(|e| e.to_string())?;
        let barrier = *library.get::<Barrier>(b"uform_gloo_barrier\0").map_err(|e| e.to_string())?;
        let free = *library.get::<Free>(b"uform_gloo_free\0").map_err(|e| e.to_string())?;
        Ok(Shim { connect, all_reduce, all_gather, barrier, free, _library: library })
    }
}

/// Whether gloo loads in this process; the reason as an unavailable error when it does not.
pub fn available() -> Result<()> {
    shim().map(|_| ())
}

/// Says which ranks of the group are known to be gone (their process ended), for the message of a failed
/// collective. The mesh answers for processes of this machine.
pub type GoneRanks = Arc<dyn Fn() -> Vec<usize> + Send + Sync>;

/// A group of processes connected through gloo.
pub struct Group {
    shim: &'static Shim,
    rank: usize,
    size: usize,
    timeout: Duration,
    gone: GoneRanks,
    /// The gloo context; one collective at a time runs on it. `None` once a collective broke it, with the error.
    state: Mutex<std::result::Result<GroupPtr, Error>>,
}

struct GroupPtr(*mut c_void);
// SAFETY: the gloo context is used by one thread at a time (the mutex around it), and gloo's contexts may move
// between threads: torch.distributed calls them from whichever thread runs a collective.
unsafe impl Send for GroupPtr {}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("gloo::Group").field("rank", &self.rank).field("size", &self.size).finish()
    }
}

const MESSAGE: usize = 1024;

/// Turns the shim's result into an error: what was being done, who is gone, and gloo's own words.
fn failure(kind: c_int, buffer: &[c_char], what: &str, gone: &[usize], timeout: Duration) -> Error {
    // SAFETY: the shim always NUL-terminates within the buffer it was given.
    let said = unsafe { CStr::from_ptr(buffer.as_ptr()) }.to_string_lossy().into_owned();
    let who = match gone {
        [] => String::new(),
        [one] => format!(": rank {one} of the mesh is gone"),
        many => format!(
            ": ranks {} of the mesh are gone",
            many.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")
        ),
    };
    match kind {
        1 => Error::timeout(format!(
            "{what} waited past the mesh's timeout ({} s){who}; gloo said: {said}",
            timeout.as_secs_f64()
        )),
        2 => Error::conflict(format!("{what} lost a peer{who}; gloo said: {said}")),
        _ => Error::internal(format!("{what} failed{who}; gloo said: {said}")),
    }
}

/// The ranks known to be gone after a collective failed with `kind`. A lost connection is seen as soon as the
/// peer's sockets close, which the kernel does while the process is still exiting: it is given up to a second to be
/// gone for good before none is named.
fn gone_after(kind: c_int, gone: &GoneRanks) -> Vec<usize> {
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        let ranks = gone();
        if !ranks.is_empty() || kind != 2 || Instant::now() >= deadline {
            return ranks;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

impl Group {
    /// Connects this process, rank `rank` of `size`, to the others through the file store `store`, listening on
    /// `address` (an IP address or a host name). Fails with a timeout when some process has not connected within
    /// `timeout`.
    pub fn connect(
        store: &Path,
        address: &str,
        rank: usize,
        size: usize,
        timeout: Duration,
        gone: GoneRanks,
    ) -> Result<Group> {
        let shim = shim()?;
        let store_c = CString::new(store.as_os_str().as_encoded_bytes())
            .map_err(|_| Error::internal("the collective store's path holds a NUL"))?;
        let address_c =
            CString::new(address).map_err(|_| Error::internal("the collective's listening address holds a NUL"))?;
        let mut buffer = [0 as c_char; MESSAGE];
        let mut context = std::ptr::null_mut();
        let millis = i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX);
        // SAFETY: valid NUL-terminated strings, an out pointer, and a message buffer of the length passed.
        let kind = unsafe {
            (shim.connect)(
                store_c.as_ptr(),
                address_c.as_ptr(),
                rank as c_int,
                size as c_int,
                millis,
                &mut context,
                buffer.as_mut_ptr(),
                MESSAGE,
            )
        };
        if kind != 0 {
            let what = format!("connecting rank {rank} of {size} to the mesh's other processes");
            return Err(failure(kind, &buffer, &what, &gone_after(kind, &gone), timeout));
        }
        Ok(Group { shim, rank, size, timeout, gone, state: Mutex::new(Ok(GroupPtr(context))) })
    }

    /// Runs one collective on the context, breaking the group when it fails.
    fn run(&self, what: &str, call: impl FnOnce(*mut c_void, *mut c_char) -> c_int) -> Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let context = match &*state {
            Ok(context) => context.0,
            Err(e) => return Err(e.clone()),
        };
        let started = Instant::now();
        let mut buffer = [0 as c_char; MESSAGE];
        let kind = call(context, buffer.as_mut_ptr());
        if kind == 0 {
            return Ok(());
        }
        let what = format!("{what} across the mesh (rank {} of {}, after {:.1} s)", self.rank, self.size, {
            started.elapsed().as_secs_f64()
        });
        let error = failure(kind, &buffer, &what, &gone_after(kind, &self.gone), self.timeout);
        // A failed collective leaves gloo's pairs in an unknown state: no later one may run on them.
        // SAFETY: the context came from a successful connect and is freed once, here, under the lock.
        unsafe { (self.shim.free)(context) };
        *state = Err(error.clone());
        Err(error)
    }

    /// Returns once every process of the group has entered it.
    pub fn barrier(&self) -> Result<()> {
        // SAFETY: a live context and a message buffer of MESSAGE bytes.
        self.run("a barrier", |c, m| unsafe { (self.shim.barrier)(c, m, MESSAGE) })
    }
}

impl Collective for Group {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn all_reduce_sum(&self, data: &mut [f32]) -> Result<()> {
        let what = format!("an all-reduce of {} floats", data.len());
        // SAFETY: a live context, `data` valid for its length, and a message buffer of MESSAGE bytes.
        self.run(&what, |c, m| unsafe { (self.shim.all_reduce)(c, data.as_mut_ptr(), data.len(), m, MESSAGE) })
    }
    fn all_gather(&self, values: &[u64]) -> Result<Vec<u64>> {
        let mut out = vec![0u64; values.len() * self.size];
        // SAFETY: a live context, `values` valid for its length, `out` for `len · size`, a message buffer.
        self.run("an all-gather", |c, m| unsafe {
            (self.shim.all_gather)(c, values.as_ptr(), values.len(), out.as_mut_ptr(), m, MESSAGE)
        })?;
        Ok(out)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Ok(context) = &*self.state.lock().unwrap_or_else(|p| p.into_inner()) {
            // SAFETY: the context came from a successful connect and nothing uses it after the group.
            unsafe { (self.shim.free)(context.0) };
        }
    }
}

#[cfg(test)]
mod tests;
