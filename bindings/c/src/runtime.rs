//! What the generated C glue stands on: the panic guard and per-thread last error, handle registries that make
//! stale and foreign handles an error instead of a crash, arenas that own what C reads, and readers for C
//! strings and arrays. Maps are B-trees, not hash tables: a hash table points into the middle of its allocation,
//! which valgrind reports as a possible leak for the process-lifetime tables.

use std::any::Any;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// Runs a fallible call: a panic becomes the internal error; an error is remembered for this thread.
pub fn guard(function: &str, body: impl FnOnce() -> Result<(), Error>) -> i32 {
    let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        let e = Error::from_panic(payload);
        Err(Error::internal(format!("{function}: {}", e.message())))
    });
    match outcome {
        Ok(()) => 0,
        Err(e) => {
            remember(&e);
            super::status_of(e.kind())
        }
    }
}

/// Runs an infallible call returning a pointer; a panic gives NULL and remembers the internal error.
pub fn guard_value<T>(function: &str, body: impl FnOnce() -> *const T) -> *const T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        let e = Error::from_panic(payload);
        remember(&Error::internal(format!("{function}: {}", e.message())));
        std::ptr::null()
    })
}

/// Owns what a C caller reads through pointers: strings and arrays. Pointers stay valid while the arena lives.
#[derive(Default)]
pub struct Arena {
    strings: Vec<CString>,
    lists: Vec<Box<dyn Any>>,
}

// The arena's contents are written once, before any pointer into them is handed out, and only read afterwards.
unsafe impl Send for Arena {}
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

type ProcessCache = Mutex<BTreeMap<&'static str, &'static (Arena, Box<dyn Any + Send + Sync>)>>;

/// Computes a value once per process, with an arena that lives as long; later calls get the same value.
pub fn process_cached<R: Copy + 'static>(
    key: &'static str,
    compute: impl FnOnce(&mut Arena) -> Result<R, Error>,
) -> Result<R, Error> {
    static CACHE: OnceLock<ProcessCache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, value)) = map.get(key) {
        return value.downcast_ref::<SendPtr<R>>().map(|p| p.0).ok_or_else(|| Error::internal(format!("cache entry {key} has another type")));
    }
    let mut arena = Arena::default();
    let value = compute(&mut arena)?;
    let boxed: Box<dyn Any + Send + Sync> = Box::new(SendPtr(value));
    let leaked: &'static (Arena, Box<dyn Any + Send + Sync>) = Box::leak(Box::new((arena, boxed)));
    map.insert(key, leaked);
    leaked.1.downcast_ref::<SendPtr<R>>().map(|p| p.0).ok_or_else(|| Error::internal("cache type"))
}

#[derive(Clone, Copy)]
pub struct SendPtr<T>(pub T);
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}

/// A NUL-terminated copy of a string computed once per process.
pub fn process_c_str(key: &'static str, compute: impl FnOnce() -> String) -> *const c_char {
    process_cached(key, |arena| Ok(SendPtr(arena.string(&compute())))).map_or(std::ptr::null(), |p| p.0)
}

/// A NUL-terminated copy of a static string, interned for the life of the process; NULL for `None`.
pub fn static_c_str_opt(text: Option<&'static str>) -> *const c_char {
    static INTERNED: OnceLock<Mutex<BTreeMap<&'static str, CString>>> = OnceLock::new();
    let Some(text) = text else { return std::ptr::null() };
    let mut map = INTERNED.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    map.entry(text).or_insert_with(|| CString::new(text).unwrap_or_default()).as_ptr()
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
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    std::str::from_utf8(bytes)
        .map(|s| Some(s.to_string()))
        .map_err(|e| Error::invalid_argument(argument, format!("is not UTF-8: byte {} of {:?} is invalid", e.valid_up_to(), String::from_utf8_lossy(bytes))))
}

/// A C array argument: NULL with a zero count is absent; NULL with a count is an invalid argument.
pub fn read_list<T: Copy>(ptr: *const T, count: usize, argument: &str) -> Result<Option<Vec<T>>, Error> {
    match (ptr.is_null(), count) {
        (_, 0) => Ok(None),
        (true, n) => Err(Error::invalid_argument(argument, format!("is NULL but its count is {n}"))),
        (false, n) if n > (isize::MAX as usize) / std::mem::size_of::<T>().max(1) => {
            Err(Error::invalid_argument(argument, format!("count {n} is larger than any array")))
        }
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

/// One live handle and the results it keeps for C to read.
pub struct Entry<T> {
    pub value: T,
    cache: Mutex<BTreeMap<&'static str, Box<(Arena, Box<dyn Any + Send + Sync>)>>>,
}

impl<T> Entry<T> {
    /// Computes a result once per handle; C reads it until the handle is freed.
    pub fn cached<R: Copy + 'static>(&self, key: &'static str, compute: impl FnOnce(&mut Arena) -> Result<R, Error>) -> Result<&R, Error> {
        let mut map = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if !map.contains_key(key) {
            let mut arena = Arena::default();
            let value = compute(&mut arena)?;
            let boxed: Box<dyn Any + Send + Sync> = Box::new(SendPtr(value));
            map.insert(key, Box::new((arena, boxed)));
        }
        let entry: *const (Arena, Box<dyn Any + Send + Sync>) = &**map.get(key).expect("inserted above");
        // The boxed entry never moves and lives as long as `self`; it is never replaced once inserted.
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

impl<T> Registry<T> {
    pub const fn new() -> Self {
        Registry { live: RwLock::new(None), next: AtomicUsize::new(0), class: OnceLock::new() }
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
        let entry = Arc::new(Entry { value, cache: Mutex::default() });
        self.live.write().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(BTreeMap::new).insert(id, entry);
        id
    }

    fn issued(&self, id: usize) -> bool {
        let Some(offset) = id.checked_sub(FIRST_ID) else { return false };
        let slot = offset / ID_STEP;
        offset % ID_STEP == 0 && slot % CLASSES == self.class() && slot / CLASSES < self.next.load(Ordering::Relaxed)
    }

    pub fn get(&self, id: usize, argument: &str, class: &str) -> Result<Arc<Entry<T>>, Error> {
        if id == 0 {
            return Err(null_argument(argument));
        }
        let live = self.live.read().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = live.as_ref().and_then(|m| m.get(&id)) {
            return Ok(entry.clone());
        }
        if self.issued(id) {
            Err(Error::new(ErrorKind::FreedHandle, format!("`{argument}` is a freed {class} handle")))
        } else {
            let article = if class.starts_with(['A', 'E', 'I', 'O', 'U']) { "an" } else { "a" };
            Err(Error::new(ErrorKind::FreedHandle, format!("`{argument}` ({id:#x}) was never handed out by UForm as {article} {class} handle")))
        }
    }

    /// Frees a handle: `release` runs on the value (it may refuse, as a borrowed handle does); a handle
    /// already freed is left alone.
    pub fn free(&self, id: usize, argument: &str, class: &str, release: impl FnOnce(&T) -> Result<(), Error>) -> Result<(), Error> {
        let entry = match self.get(id, argument, class) {
            Ok(entry) => entry,
            Err(_) if self.issued(id) => return Ok(()),
            Err(e) => return Err(e),
        };
        release(&entry.value)?;
        if let Some(map) = self.live.write().unwrap_or_else(|p| p.into_inner()).as_mut() {
            map.remove(&id);
        }
        Ok(())
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
}
