//! Handle registries: C holds ids that look like pointers, and a stale or foreign id is an error instead of a crash.
//! Each thread remembers its last few lookups, so a call on a handle it used before costs loads only.

use crate::runtime::{null_argument, Arena, SendPtr};
use std::any::{Any, TypeId};
use std::cell::{Cell, UnsafeCell};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use uform_core::{Error, ErrorKind};

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
