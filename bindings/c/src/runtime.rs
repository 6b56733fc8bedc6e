//! What the generated C glue stands on: the panic guard and per-thread last error, handle registries that make
//! stale and foreign handles an error instead of a crash, arenas that own what C reads, and readers for C
//! strings and arrays. Maps are B-trees, not hash tables: a hash table points into the middle of its allocation,
//! which valgrind reports as a possible leak for the process-lifetime tables.

use std::any::{Any, TypeId};
use std::cell::{Cell, RefCell, UnsafeCell};
use std::collections::BTreeMap;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use uform_core::{Error, ErrorKind};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    static THREAD_ARENA: RefCell<Arena> = RefCell::new(Arena::default());
}

fn remember(error: &Error) {
    let text = CString::new(error.message().replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|slot| *slot.borrow_mut() = text);
}

pub fn last_error_message() -> *const c_char {
    LAST_ERROR.with(|slot| slot.borrow().as_ptr())
}

pub fn status_name(status: i32, status_of: fn(ErrorKind) -> i32) -> *const c_char {
    static NAMES: OnceLock<Vec<(i32, CString)>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        let mut names = vec![(0, CString::new("ok").unwrap())];
        names.extend(ErrorKind::ALL.iter().map(|k| (status_of(*k), CString::new(k.code()).unwrap())));
        names
    });
    names.iter().find(|(s, _)| *s == status).map_or(std::ptr::null(), |(_, n)| n.as_ptr())
}

/// Runs a fallible call: a panic becomes the internal error (the core's one message for it, as in every binding);
/// an error is remembered for this thread. `function` names the C function in the source only.
pub fn guard(_function: &str, body: impl FnOnce() -> Result<(), Error>) -> i32 {
    let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| Err(Error::from_panic(payload)));
    match outcome {
        Ok(()) => 0,
        Err(e) => {
            remember(&e);
            super::status_of(e.kind())
        }
    }
}

/// Runs an infallible call returning a pointer; a panic gives NULL and remembers the internal error.
pub fn guard_value<T>(_function: &str, body: impl FnOnce() -> *const T) -> *const T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        remember(&Error::from_panic(payload));
        std::ptr::null()
    })
}

/// Runs an infallible call returning a number or a bool; a panic gives zero (false) and remembers the internal
/// error.
#[allow(dead_code)] // used by the glue of a call that returns a number directly; the IDL has none today
pub fn guard_scalar<T: Default>(_function: &str, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        remember(&Error::from_panic(payload));
        T::default()
    })
}

/// Owns what a C caller reads through pointers: strings and arrays. Pointers stay valid while the arena lives.
#[derive(Default)]
pub struct Arena {
    strings: Vec<CString>,
    lists: Vec<Box<dyn Any>>,
}

// SAFETY: the arena's contents are written once, before any pointer into them is handed out, and only read
// afterwards; the raw pointers it hands out point into its own heap allocations, which do not move with it.
unsafe impl Send for Arena {}
// SAFETY: as for `Send`: once shared, the arena is only read.
unsafe impl Sync for Arena {}

impl Arena {
    pub fn string(&mut self, text: &str) -> *const c_char {
        let c = CString::new(text.replace('\0', "\\0")).unwrap_or_default();
        let ptr = c.as_ptr();
        self.strings.push(c);
        ptr
    }
    pub fn list<T: 'static>(&mut self, items: Vec<T>) -> *const T {
        self.list_parts(items).0
    }
    pub fn list_parts<T: 'static>(&mut self, items: Vec<T>) -> (*const T, usize) {
        if items.is_empty() {
            return (std::ptr::null(), 0);
        }
        let boxed: Box<[T]> = items.into_boxed_slice();
        let parts = (boxed.as_ptr(), boxed.len());
        self.lists.push(Box::new(boxed));
        parts
    }
    fn clear(&mut self) {
        self.strings.clear();
        self.lists.clear();
    }
}

/// Converts with this thread's arena, emptied first: results stay valid until this thread's next such call.
pub fn thread_arena<R>(f: impl FnOnce(&mut Arena) -> R) -> R {
    THREAD_ARENA.with(|a| {
        let mut arena = a.borrow_mut();
        arena.clear();
        f(&mut arena)
    })
}

/// A value computed once per process with the arena that owns what it points to; leaked, so it lives as long.
type ProcessValue = &'static (Arena, Box<dyn Any + Send + Sync>);

/// The most process-lifetime values (one per cached function); a further key is an internal error.
const PROCESS_SLOTS: usize = 32;

/// Filled in order and never emptied, so a reader scans the filled prefix with loads only: no lock, no atomic
/// read-modify-write on the way to a value computed before (a mutex here cost about 20 ns per call).
static PROCESS_VALUES: [OnceLock<(&str, ProcessValue)>; PROCESS_SLOTS] = [const { OnceLock::new() }; PROCESS_SLOTS];

fn process_value(key: &str) -> Option<ProcessValue> {
    for slot in &PROCESS_VALUES {
        match slot.get() {
            // The same literal usually has the same address; the text decides otherwise.
            Some((k, value)) if std::ptr::eq(k.as_ptr(), key.as_ptr()) && k.len() == key.len() || *k == key => {
                return Some(value)
            }
            Some(_) => {}
            None => return None,
        }
    }
    None
}

fn downcast<R: Copy + 'static>(key: &str, value: ProcessValue) -> Result<R, Error> {
    value
        .1
        .downcast_ref::<SendPtr<R>>()
        .map(|p| p.0)
        .ok_or_else(|| Error::internal(format!("cache entry {key} has another type")))
}

/// Computes a value once per process, with an arena that lives as long; later calls get the same value.
pub fn process_cached<R: Copy + 'static>(
    key: &'static str,
    compute: impl FnOnce(&mut Arena) -> Result<R, Error>,
) -> Result<R, Error> {
    if let Some(value) = process_value(key) {
        return downcast(key, value);
    }
    static WRITER: Mutex<()> = Mutex::new(());
    let _writer = WRITER.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(value) = process_value(key) {
        return downcast(key, value); // another thread computed it while this one waited
    }
    let slot = PROCESS_VALUES
        .iter()
        .find(|slot| slot.get().is_none())
        .ok_or_else(|| Error::internal(format!("more than {PROCESS_SLOTS} values cached per process, at {key}")))?;
    let mut arena = Arena::default();
    let value = compute(&mut arena)?;
    let boxed: Box<dyn Any + Send + Sync> = Box::new(SendPtr(value));
    let leaked: ProcessValue = Box::leak(Box::new((arena, boxed)));
    let _ = slot.set((key, leaked)); // empty until now: only this thread, holding the writer lock, fills slots
    downcast(key, leaked)
}

/// A value holding raw pointers into an arena (a C view of a core value), shared between threads.
#[derive(Clone, Copy)]
pub struct SendPtr<T>(pub T);
// SAFETY: a `SendPtr` holds pointers into an `Arena` that lives beside it for the process or the handle, written
// before it is shared and only read afterwards (see `Arena`).
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as for `Send`.
unsafe impl<T> Sync for SendPtr<T> {}

/// A NUL-terminated copy of a string computed once per process.
pub fn process_c_str(key: &'static str, compute: impl FnOnce() -> String) -> *const c_char {
    process_cached(key, |arena| Ok(SendPtr(arena.string(&compute())))).map_or(std::ptr::null(), |p| p.0)
}

/// A NUL-terminated copy of a string a call returned, interned for the life of the process: static storage, never
/// freed, one copy per distinct value (what a non-constant call returning a string hands C).
#[allow(dead_code)] // used by the glue of a non-constant call returning a string; the IDL has none today
pub fn interned_c_str(text: String) -> *const c_char {
    static INTERNED: OnceLock<Mutex<BTreeMap<String, CString>>> = OnceLock::new();
    let mut map = INTERNED.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    map.entry(text).or_insert_with_key(|t| CString::new(t.as_str()).unwrap_or_default()).as_ptr()
}

/// A NUL-terminated copy of a static string, interned for the life of the process; NULL for `None`.
pub fn static_c_str_opt(text: Option<&'static str>) -> *const c_char {
    static INTERNED: OnceLock<Mutex<BTreeMap<&'static str, CString>>> = OnceLock::new();
    let Some(text) = text else { return std::ptr::null() };
    let mut map = INTERNED.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    map.entry(text).or_insert_with(|| CString::new(text).unwrap_or_default()).as_ptr()
}

/// A `gpu_class` argument, which C passes as the id [`uform_core::devices::gpu_class_id`] gives: its spelling.
#[allow(dead_code)] // used by the glue of a call taking a gpu_class; the IDL has none today
pub fn gpu_class_name(id: i32, argument: &str) -> Result<&'static str, Error> {
    uform_core::devices::gpu_class_name(id)
        .ok_or_else(|| Error::invalid_argument(argument, format!("is {id}, not a GPU class id the tables know")))
}

pub fn null_argument(argument: &str) -> Error {
    Error::invalid_argument(argument, "is NULL")
}

pub fn check_out<T>(ptr: *mut T, argument: &str) -> Result<(), Error> {
    if ptr.is_null() {
        Err(null_argument(argument))
    } else {
        Ok(())
    }
}

/// A C string argument: NULL is absent; bytes that are not UTF-8 are an invalid argument.
pub fn read_str(ptr: *const c_char, argument: &str) -> Result<Option<String>, Error> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: not NULL (above); the C caller passes a NUL-terminated string that lives for the call (the header's
    // contract).
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    std::str::from_utf8(bytes).map(|s| Some(s.to_string())).map_err(|e| {
        Error::invalid_argument(
            argument,
            format!("is not UTF-8: byte {} of {:?} is invalid", e.valid_up_to(), String::from_utf8_lossy(bytes)),
        )
    })
}

/// A C array argument: NULL with a zero count is absent; NULL with a count is an invalid argument.
pub fn read_list<T: Copy>(ptr: *const T, count: usize, argument: &str) -> Result<Option<Vec<T>>, Error> {
    match (ptr.is_null(), count) {
        (_, 0) => Ok(None),
        (true, n) => Err(Error::invalid_argument(argument, format!("is NULL but its count is {n}"))),
        (false, n) if n > (isize::MAX as usize) / std::mem::size_of::<T>().max(1) => {
            Err(Error::invalid_argument(argument, format!("count {n} is larger than any array")))
        }
        // SAFETY: not NULL, and the C caller passes `n` readable elements that live for the call (the header's
        // contract); `n` elements fit in `isize` bytes (above).
        (false, n) => Ok(Some(unsafe { std::slice::from_raw_parts(ptr, n) }.to_vec())),
    }
}

pub fn nonzero<T: Default + PartialEq>(value: T) -> Option<T> {
    if value == T::default() {
        None
    } else {
        Some(value)
    }
}

/// A cached result and the arena its C view lives in.
type Cached = (Arena, Box<dyn Any + Send + Sync>);

/// One live handle and the results it keeps for C to read.
pub struct Entry<T> {
    pub value: T,
    cache: Mutex<BTreeMap<&'static str, Box<Cached>>>,
    /// Cleared when the handle is freed, before it leaves the registry, so a thread's cached lookup sees it.
    live: AtomicBool,
}

impl<T> Entry<T> {
    /// Computes a result once per handle; C reads it until the handle is freed.
    pub fn cached<R: Copy + 'static>(
        &self,
        key: &'static str,
        compute: impl FnOnce(&mut Arena) -> Result<R, Error>,
    ) -> Result<&R, Error> {
        let mut map = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if !map.contains_key(key) {
            let mut arena = Arena::default();
            let value = compute(&mut arena)?;
            let boxed: Box<dyn Any + Send + Sync> = Box::new(SendPtr(value));
            map.insert(key, Box::new((arena, boxed)));
        }
        let entry: *const (Arena, Box<dyn Any + Send + Sync>) = &**map.get(key).expect("inserted above");
        // SAFETY: the boxed entry never moves and lives as long as `self`; it is never replaced once inserted.
        let entry = unsafe { &*entry };
        entry.1.downcast_ref::<SendPtr<R>>().map(|p| &p.0).ok_or_else(|| Error::internal("cache type"))
    }
}

/// The live handles of one class. C holds ids that look like pointers; ids are never reused, so a freed or
/// foreign handle is an error, never a use-after-free. Classes interleave their ids (class `k` issues slots
/// `k`, `k + CLASSES`, `k + 2 * CLASSES`, ...), so a handle of one class passed where another is expected is
/// "never handed out as" that class, never a live handle of it that happens to share the number.
pub struct Registry<T> {
    live: RwLock<Option<BTreeMap<usize, Arc<Entry<T>>>>>,
    /// Handles issued so far.
    next: AtomicUsize,
    /// This registry's class slot, taken on first use.
    class: OnceLock<usize>,
}

const FIRST_ID: usize = 0x1000;
const ID_STEP: usize = 16;
/// The most registries (handle classes) one library holds.
const CLASSES: usize = 64;
static NEXT_CLASS: AtomicUsize = AtomicUsize::new(0);

impl<T: Send + Sync + 'static> Registry<T> {
    pub const fn new() -> Self {
        Registry { live: RwLock::new(None), next: AtomicUsize::new(0), class: OnceLock::new() }
    }

    /// Tells registries apart in a thread's cache (two registries may hold the same type).
    #[inline]
    fn address(&self) -> usize {
        self as *const Self as usize
    }

    fn class(&self) -> usize {
        *self.class.get_or_init(|| {
            let class = NEXT_CLASS.fetch_add(1, Ordering::Relaxed);
            assert!(class < CLASSES, "more than {CLASSES} handle classes");
            class
        })
    }

    pub fn insert(&self, value: T) -> usize {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = FIRST_ID + (n * CLASSES + self.class()) * ID_STEP;
        let entry = Arc::new(Entry { value, cache: Mutex::default(), live: AtomicBool::new(true) });
        self.live.write().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(BTreeMap::new).insert(id, entry);
        id
    }

    fn issued(&self, id: usize) -> bool {
        let Some(offset) = id.checked_sub(FIRST_ID) else { return false };
        let slot = offset / ID_STEP;
        offset % ID_STEP == 0 && slot % CLASSES == self.class() && slot / CLASSES < self.next.load(Ordering::Relaxed)
    }

    /// The live handle `id`: from this thread's cache of recent lookups when it is there (loads only), else from
    /// the registry (a lock and a reference count), which the cache then remembers.
    #[inline]
    pub fn get(&self, id: usize, argument: &str, class: &str) -> Result<Handle<T>, Error> {
        match HandleCache::lookup(self.address(), id) {
            Some(handle) => Ok(handle),
            None => self.get_slow(id, argument, class),
        }
    }

    #[inline(never)]
    fn get_slow(&self, id: usize, argument: &str, class: &str) -> Result<Handle<T>, Error> {
        if id == 0 {
            return Err(null_argument(argument));
        }
        let found = self.live.read().unwrap_or_else(|p| p.into_inner()).as_ref().and_then(|m| m.get(&id)).cloned();
        if let Some(entry) = found {
            return Ok(HandleCache::remember(self.address(), id, entry));
        }
        if self.issued(id) {
            Err(Error::new(ErrorKind::FreedHandle, format!("`{argument}` is a freed {class} handle")))
        } else {
            let article = if class.starts_with(['A', 'E', 'I', 'O', 'U']) { "an" } else { "a" };
            Err(Error::new(
                ErrorKind::FreedHandle,
                format!("`{argument}` ({id:#x}) was never handed out by UForm as {article} {class} handle"),
            ))
        }
    }

    /// Frees a handle: `release` runs on the value (it may refuse, as a borrowed handle does); a handle
    /// already freed is left alone.
    pub fn free(
        &self,
        id: usize,
        argument: &str,
        class: &str,
        release: impl FnOnce(&T) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let entry = match self.get(id, argument, class) {
            Ok(entry) => entry,
            Err(_) if self.issued(id) => return Ok(()),
            Err(e) => return Err(e),
        };
        release(&entry.value)?;
        entry.live.store(false, Ordering::Release);
        if let Some(map) = self.live.write().unwrap_or_else(|p| p.into_inner()).as_mut() {
            map.remove(&id);
        }
        Ok(())
    }
}

/// A live handle looked up for one call; it derefs to the registry's entry and must not outlive the call.
pub struct Handle<T: 'static> {
    entry: *const Entry<T>,
    /// This thread's pin count when the cache keeps the entry alive (this handle holds one pin); else null.
    pin: *const Cell<usize>,
    /// The entry's reference when the cache does not hold it.
    _owned: Option<Arc<Entry<T>>>,
}

impl<T> std::ops::Deref for Handle<T> {
    type Target = Entry<T>;
    fn deref(&self) -> &Entry<T> {
        // SAFETY: `entry` points into an Arc that `_owned` or this thread's pinned cache holds while `self` lives.
        unsafe { &*self.entry }
    }
}

impl<T> Drop for Handle<T> {
    fn drop(&mut self) {
        // SAFETY: a handle is neither Send nor Sync, so it drops on the thread whose cache `pin` belongs to, and
        // that cache lives until the thread's thread-locals are destroyed, after any handle of the thread.
        if let Some(pin) = unsafe { self.pin.as_ref() } {
            pin.set(pin.get() - 1);
        }
    }
}

thread_local! {
    static HANDLE_CACHE: HandleCache = const { HandleCache { pinned: Cell::new(0), recent: UnsafeCell::new(Vec::new()) } };
}

/// Each thread's last few handle lookups, holding a reference to each entry. A call on a handle found here costs
/// loads only; the registry's read lock and the entry's reference count (four atomic read-modify-writes, about
/// 40 ns of a 60 ns `uform_executor_drain` on a busy two-core machine) are paid once per thread and handle. An
/// entry freed since is seen by its `live` flag and looked up again, which reports it freed. A cached reference is
/// dropped only while no handle taken from the cache lives on this thread, so a handle never dangles; it keeps a
/// freed entry's memory (not its threads: `free` joined them) until the thread's next eviction or its exit.
struct HandleCache {
    /// Handles taken from the cache and not yet dropped on this thread.
    pinned: Cell<usize>,
    recent: UnsafeCell<Vec<Recent>>,
}

/// One remembered lookup: registry and id name it; the type is checked before the pointer is used.
struct Recent {
    registry: usize,
    id: usize,
    entry_type: TypeId,
    entry: *const (),
    _keep: Arc<dyn Any + Send + Sync>,
}

/// Handles a thread remembers; a miss with this many evicts them all (while none is pinned).
const RECENT_HANDLES: usize = 4;

impl HandleCache {
    #[inline]
    fn lookup<T: Send + Sync + 'static>(registry: usize, id: usize) -> Option<Handle<T>> {
        HANDLE_CACHE
            .try_with(|cache| {
                // SAFETY: only this thread touches `recent`, and no reference into it outlives this closure.
                let recent = unsafe { &*cache.recent.get() };
                let found = recent
                    .iter()
                    .find(|r| r.id == id && r.registry == registry && r.entry_type == TypeId::of::<Entry<T>>())?;
                let entry = found.entry as *const Entry<T>;
                // SAFETY: `entry_type` says the pointer is an `Entry<T>`; `_keep` keeps it alive while cached.
                if !unsafe { &*entry }.live.load(Ordering::Acquire) {
                    return None; // freed: the registry says so
                }
                cache.pinned.set(cache.pinned.get() + 1);
                Some(Handle { entry, pin: &cache.pinned, _owned: None })
            })
            .ok()
            .flatten()
    }

    fn remember<T: Send + Sync + 'static>(registry: usize, id: usize, entry: Arc<Entry<T>>) -> Handle<T> {
        let pointer: *const Entry<T> = &*entry;
        let cached = HANDLE_CACHE.try_with(|cache| {
            if cache.pinned.get() > 0 {
                return None;
            }
            // SAFETY: only this thread touches `recent`; nothing borrowed from the cache lives (`pinned` is 0),
            // and the evicted references are dropped after the borrow ends, in case a drop calls back in.
            let evicted = {
                // SAFETY: see above.
                let recent = unsafe { &mut *cache.recent.get() };
                let evicted = if recent.len() >= RECENT_HANDLES { std::mem::take(recent) } else { Vec::new() };
                let keep = entry.clone();
                recent.push(Recent {
                    registry,
                    id,
                    entry_type: TypeId::of::<Entry<T>>(),
                    entry: pointer.cast(),
                    _keep: keep,
                });
                evicted
            };
            drop(evicted);
            cache.pinned.set(cache.pinned.get() + 1);
            Some(&cache.pinned as *const Cell<usize>)
        });
        match cached {
            Ok(Some(pin)) => Handle { entry: pointer, pin, _owned: None },
            _ => Handle { entry: pointer, pin: std::ptr::null(), _owned: Some(entry) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_of_one_class_are_foreign_to_another() {
        static A: Registry<u8> = Registry::new();
        static B: Registry<u8> = Registry::new();
        let (a, b) = (A.insert(1), B.insert(2));
        assert_ne!(a, b);
        assert_eq!(A.get(a, "a", "A").unwrap().value, 1);
        let foreign = B.get(a, "b", "B").err().unwrap();
        assert_eq!(foreign.kind(), ErrorKind::FreedHandle);
        assert!(foreign.message().contains("never handed out by UForm as a B handle"), "{foreign}");
        assert!(B.free(a, "b", "B", |_| Ok(())).is_err(), "freeing another class's handle is refused");
        assert!(A.get(a, "a", "A").is_ok(), "and leaves it alive");
        A.free(a, "a", "A", |_| Ok(())).unwrap();
        assert!(A.get(a, "a", "A").err().unwrap().message().contains("is a freed A handle"));
        assert!(A.get(a + 1, "a", "A").err().unwrap().message().contains("never handed out"));
        A.free(a, "a", "A", |_| Ok(())).unwrap();
    }

    #[test]
    fn cached_lookups_never_dangle_and_see_frees_from_other_threads() {
        static R: Registry<Vec<u32>> = Registry::new();
        let ids: Vec<usize> = (0..3 * RECENT_HANDLES as u32).map(|i| R.insert(vec![i; 100])).collect();
        // Many handles at once on this thread: the cache fills and would evict, but never while a handle it lent lives.
        let handles: Vec<Handle<Vec<u32>>> = ids.iter().map(|id| R.get(*id, "r", "R").unwrap()).collect();
        let again: Vec<Handle<Vec<u32>>> = ids.iter().map(|id| R.get(*id, "r", "R").unwrap()).collect();
        for (i, (h, g)) in handles.iter().zip(&again).enumerate() {
            assert_eq!((h.value[99], g.value[0]), (i as u32, i as u32));
        }
        drop((handles, again));
        assert_eq!(HANDLE_CACHE.with(|c| c.pinned.get()), 0);
        // A handle this thread has cached, freed on another thread, is freed here too.
        let id = ids[0];
        assert_eq!(R.get(id, "r", "R").unwrap().value[0], 0);
        std::thread::scope(|s| s.spawn(|| R.free(id, "r", "R", |_| Ok(())).unwrap()).join().unwrap());
        let err = R.get(id, "r", "R").err().unwrap();
        assert!(err.message().contains("is a freed R handle"), "{err}");
        // A handle of another class with the same cached id is refused by its type, never cast.
        static S: Registry<u64> = Registry::new();
        let live = ids[1];
        assert_eq!(R.get(live, "r", "R").unwrap().value[0], 1);
        assert!(S.get(live, "s", "S").err().unwrap().message().contains("never handed out"));
        for id in &ids[1..] {
            R.free(*id, "r", "R", |_| Ok(())).unwrap();
        }
    }
}

/// A C array of C strings (`const char *const *`, `count`): NULL with a zero count is empty; a NULL element or one
/// that is not UTF-8 is an invalid argument naming its index.
pub fn read_str_list(ptr: *const *const c_char, count: usize, argument: &str) -> Result<Vec<String>, Error> {
    let pointers = read_list(ptr, count, argument)?.unwrap_or_default();
    pointers
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            read_str(p, &format!("{argument}[{i}]"))?.ok_or_else(|| null_argument(&format!("{argument}[{i}]")))
        })
        .collect()
}

/// `uform_f32_matrix_t`: a row-major matrix of floats C reads until `uform_f32_matrix_free`. The data is the
/// core's own buffer, handed over without a copy.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct uform_f32_matrix_t {
    pub data: *const f32,
    pub rows: usize,
    pub columns: usize,
}

/// Hands the core's matrix to C: the buffer leaves Rust's ownership until [`f32_matrix_free`].
pub fn f32_matrix_to_c(matrix: uform_core::F32Matrix) -> uform_f32_matrix_t {
    let (rows, columns) = (matrix.rows as usize, matrix.columns as usize);
    let mut data = matrix.data;
    data.truncate(rows * columns);
    if data.is_empty() {
        return uform_f32_matrix_t { data: std::ptr::null(), rows, columns };
    }
    let data = Box::into_raw(data.into_boxed_slice()) as *const f32;
    uform_f32_matrix_t { data, rows, columns }
}

/// Frees what [`f32_matrix_to_c`] handed out and zeroes the struct, so a second free does nothing.
pub fn f32_matrix_free(matrix: *mut uform_f32_matrix_t) {
    if matrix.is_null() {
        return;
    }
    // SAFETY: not NULL (above); the caller passes a matrix `f32_matrix_to_c` wrote (the header's contract).
    let m = unsafe { &mut *matrix };
    if !m.data.is_null() {
        let len = m.rows * m.columns;
        // SAFETY: `data` is the boxed slice of `rows * columns` floats `f32_matrix_to_c` leaked, freed once: the
        // struct is zeroed below.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(m.data as *mut f32, len)) });
    }
    *m = uform_f32_matrix_t { data: std::ptr::null(), rows: 0, columns: 0 };
}
