//! What the generated C glue stands on: the panic guard and per-thread last error, arenas that own what C reads,
//! and readers for C strings and arrays (the handle registries are in `handles.rs`). Maps are B-trees, not hash tables: a hash table points into the middle of its allocation,
//! which valgrind reports as a possible leak for the process-lifetime tables.

use std::any::Any;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, OnceLock};
use uform_core::{Error, ErrorKind};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    /// One arena per function that returns through one, so that a call empties only its own earlier result.
    static THREAD_ARENAS: RefCell<Vec<(&'static str, Arena)>> = const { RefCell::new(Vec::new()) };
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

/// Converts with this thread's arena for the function `key`, emptied first: a result stays valid until this thread
/// calls the same function again (another function's call leaves it alone).
pub fn thread_arena<R>(key: &'static str, f: impl FnOnce(&mut Arena) -> R) -> R {
    THREAD_ARENAS.with(|arenas| {
        let mut arenas = arenas.borrow_mut();
        let at = match arenas.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                arenas.push((key, Arena::default()));
                arenas.len() - 1
            }
        };
        let arena = &mut arenas[at].1;
        arena.clear();
        f(arena)
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

/// An optional bool of an input struct (`uform_optional_bool_t`): `UFORM_ABSENT` (0) is absent, `UFORM_TRUE` (1,
/// C's `true`) and `UFORM_FALSE` (2) are the values, anything else an invalid argument naming the field.
pub fn read_optional_bool(value: u8, argument: &str) -> Result<Option<bool>, Error> {
    match value {
        0 => Ok(None),
        1 => Ok(Some(true)),
        2 => Ok(Some(false)),
        v => Err(Error::invalid_argument(
            argument,
            format!("is {v}, which is none of UFORM_ABSENT (0), UFORM_TRUE (1) and UFORM_FALSE (2)"),
        )),
    }
}

/// An optional `double` of an input struct: all-zero bits (`0.0`, what a zeroed struct holds) are absent, and
/// `-0.0` is zero itself (for a field whose zero differs from its absence, like a dropout of 0), handed to the
/// core as `0.0`. Every other value, NaN and the infinities included, passes unchanged for the core to judge.
pub fn present_f64(value: f64) -> Option<f64> {
    match value.to_bits() {
        0 => None,
        _ if value == 0.0 => Some(0.0),
        _ => Some(value),
    }
}

#[cfg(test)]
mod double_tests {
    use super::{present_f64, read_optional_bool};

    #[test]
    fn an_optional_bool_has_three_values_and_refuses_the_rest() {
        assert_eq!(read_optional_bool(0, "X.y").ok(), Some(None));
        assert_eq!(read_optional_bool(1, "X.y").ok(), Some(Some(true)));
        assert_eq!(read_optional_bool(2, "X.y").ok(), Some(Some(false)));
        for v in [3, 0x80, 0xff] {
            let message = read_optional_bool(v, "X.y").err().map(|e| e.to_string()).unwrap_or_default();
            assert!(message.contains("X.y") && message.contains(&v.to_string()), "{message}");
        }
    }

    #[test]
    fn a_double_field_is_absent_only_as_all_zero_bits() {
        assert_eq!(present_f64(0.0), None);
        assert_eq!(present_f64(-0.0).map(f64::to_bits), Some(0.0f64.to_bits()), "-0.0 is zero itself, as +0.0");
        assert!(present_f64(f64::NAN).is_some_and(f64::is_nan), "NaN reaches the core, which refuses it");
        assert_eq!(present_f64(f64::INFINITY), Some(f64::INFINITY));
        assert_eq!(present_f64(-1e-300), Some(-1e-300));
        assert_eq!(present_f64(5e-5), Some(5e-5));
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

/// `uform_bytes_t`: an encoded file's bytes the caller lends for one call (`len` bytes at `data`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct uform_bytes_t {
    pub data: *const u8,
    pub len: usize,
}

/// A C array of byte buffers (`const uform_bytes_t *`, `count`), each borrowed in place for the call, never copied:
/// NULL with a zero count is empty; an element whose `data` is NULL is empty when its `len` is 0 and an invalid
/// argument naming its index otherwise.
pub fn read_bytes_list<'a>(ptr: *const uform_bytes_t, count: usize, argument: &str) -> Result<Vec<&'a [u8]>, Error> {
    let buffers = read_list(ptr, count, argument)?.unwrap_or_default();
    buffers
        .into_iter()
        .enumerate()
        .map(|(i, b)| match (b.data.is_null(), b.len) {
            (_, 0) => Ok(&[][..]),
            (true, n) => {
                Err(Error::invalid_argument(&format!("{argument}[{i}]"), format!("is NULL but its len is {n}")))
            }
            (false, n) if n > isize::MAX as usize => {
                Err(Error::invalid_argument(&format!("{argument}[{i}]"), format!("len {n} is larger than any buffer")))
            }
            // SAFETY: not NULL, and the C caller lends `n` readable bytes that live for the call (the header's
            // contract); `n` fits in `isize` (above).
            (false, n) => Ok(unsafe { std::slice::from_raw_parts(b.data, n) }),
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
