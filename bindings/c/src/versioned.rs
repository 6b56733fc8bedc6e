//! C structs that grow. Every input record's struct leads with `uint32_t struct_size`: the `sizeof` the caller's
//! uform.h declared, or 0 for the struct's first layout. [`read_versioned`] reads only the bytes the caller declared
//! (the fields a later uform.h appended stay zero, that is absent) and refuses bytes past the struct this library
//! knows unless all are zero; [`write_versioned`] writes only the bytes the caller declared.

use std::mem::{size_of, MaybeUninit};
use uform_core::Error;

/// A `#[repr(C)]` struct that leads with `struct_size: u32` and for which all-zero bytes are a valid value.
///
/// # Safety
/// The implementor must be `#[repr(C)]`, start with a `u32` field, and accept any bytes a C caller may write into
/// its fields (integers, raw pointers, `bool` as C writes it), in particular all zeros.
pub unsafe trait Versioned: Copy {
    /// `sizeof` of the struct's first layout, the one a `struct_size` of 0 names.
    const FIRST_SIZE: usize;
}

/// The largest `struct_size` believed: a bigger one is taken for an uninitialised field and read no further.
pub const MAX_STRUCT_SIZE: usize = 4096;

fn size_argument(argument: &str) -> String {
    format!("{argument}.struct_size")
}

/// The caller's `struct_size`, checked: 0 gives the first layout's size.
fn declared_size<T: Versioned>(ptr: *const T, argument: &str) -> Result<usize, Error> {
    // SAFETY: the caller passed a non-null pointer to at least the leading `uint32_t struct_size`.
    let size = unsafe { ptr.cast::<u32>().read_unaligned() } as usize;
    match size {
        0 => Ok(T::FIRST_SIZE),
        1..=3 => Err(Error::invalid_argument(
            &size_argument(argument),
            format!("is {size}, smaller than `struct_size` itself: set it to the struct's sizeof, as its _INIT macro does, or to 0"),
        )),
        n if n > MAX_STRUCT_SIZE => Err(Error::invalid_argument(
            &size_argument(argument),
            format!(
                "is {n}, larger than any struct UForm declares ({MAX_STRUCT_SIZE} bytes at most): set it to the \
                 struct's sizeof, as its _INIT macro does, or zero-initialise the struct"
            ),
        )),
        n => Ok(n),
    }
}

/// Reads a caller's struct: the bytes `struct_size` declares, the rest (fields appended after the caller's uform.h)
/// zero. Bytes past the struct this library knows must all be zero: a field it does not know is set otherwise.
pub fn read_versioned<T: Versioned>(ptr: *const T, argument: &str) -> Result<T, Error> {
    let size = declared_size(ptr, argument)?;
    let known = size_of::<T>();
    if size > known {
        // SAFETY: the caller declared `size` readable bytes at `ptr`.
        let extra = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>().add(known), size - known) };
        if let Some(at) = extra.iter().position(|b| *b != 0) {
            return Err(Error::invalid_argument(
                &size_argument(argument),
                format!(
                    "is {size}, but this library (UForm {}) knows {known} bytes of the struct and byte {} past them \
                     is not zero: a field this library does not know is set, so the program's uform.h is newer \
                     than the library",
                    env!("CARGO_PKG_VERSION"),
                    known + at
                ),
            ));
        }
    }
    let mut value = MaybeUninit::<T>::zeroed();
    // SAFETY: `size.min(known)` bytes are readable at `ptr` (declared by the caller) and writable in `value`; all
    // zeros, overwritten by a C caller's bytes, is a valid `T` (the trait's contract).
    unsafe {
        std::ptr::copy_nonoverlapping(ptr.cast::<u8>(), value.as_mut_ptr().cast::<u8>(), size.min(known));
        Ok(value.assume_init())
    }
}

/// Writes a struct into the caller's: only the bytes its `struct_size` declares, which stays as the caller set it.
/// Fields the caller's uform.h has past what this library knows are left as they were.
pub fn write_versioned<T: Versioned>(ptr: *mut T, value: T, argument: &str) -> Result<(), Error> {
    let size = declared_size(ptr, argument)?;
    // SAFETY: the caller declared `size` writable bytes at `ptr`, of which the first 4 are `struct_size`, kept.
    unsafe {
        let n = size.min(size_of::<T>());
        let source = (&value as *const T).cast::<u8>();
        std::ptr::copy_nonoverlapping(source.add(4), ptr.cast::<u8>().add(4), n - 4);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A struct as a later uform.h declares it: `b` was appended.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct New {
        struct_size: u32,
        a: u32,
        b: u64,
    }
    /// The same struct as the first uform.h declared it.
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Old {
        struct_size: u32,
        a: u32,
    }
    // SAFETY: `#[repr(C)]`, led by a `u32`, and integers only.
    unsafe impl Versioned for New {
        const FIRST_SIZE: usize = size_of::<Old>();
    }

    #[test]
    fn an_older_struct_reads_its_bytes_and_defaults_the_appended_field() {
        let old = Old { struct_size: size_of::<Old>() as u32, a: 7 };
        let read = read_versioned((&old as *const Old).cast::<New>(), "config").unwrap();
        assert_eq!((read.a, read.b), (7, 0));
        let zero = Old { struct_size: 0, a: 9 };
        let read = read_versioned((&zero as *const Old).cast::<New>(), "config").unwrap();
        assert_eq!((read.a, read.b), (9, 0), "0 names the first layout");
    }

    #[test]
    fn a_newer_struct_is_read_when_its_unknown_bytes_are_zero_and_refused_otherwise() {
        let mut bytes = [0u8; 24];
        bytes[..4].copy_from_slice(&24u32.to_ne_bytes());
        bytes[4..8].copy_from_slice(&3u32.to_ne_bytes());
        bytes[8..16].copy_from_slice(&5u64.to_ne_bytes());
        // SAFETY: 24 bytes as three `u64`s, for the alignment of `New`; any bytes are a valid `u64`.
        let aligned: [u64; 3] = unsafe { std::mem::transmute(bytes) };
        let ptr = aligned.as_ptr().cast::<New>();
        assert_eq!(read_versioned(ptr, "config").unwrap(), New { struct_size: 24, a: 3, b: 5 });
        bytes[21] = 1;
        // SAFETY: as above.
        let aligned: [u64; 3] = unsafe { std::mem::transmute(bytes) };
        let err = read_versioned(aligned.as_ptr().cast::<New>(), "config").unwrap_err();
        assert!(err.message().contains("`config.struct_size` is 24") && err.message().contains("byte 21"), "{err}");
    }

    #[test]
    fn implausible_sizes_are_refused_unread() {
        for size in [1u32, 3, 4097, 0xa5a5_a5a5] {
            let old = Old { struct_size: size, a: 1 };
            let err = read_versioned((&old as *const Old).cast::<New>(), "options").unwrap_err();
            assert!(err.message().contains(&format!("`options.struct_size` is {size}")), "{err}");
        }
    }

    #[test]
    fn a_write_stops_at_the_callers_size_and_keeps_it() {
        let mut target = [0xa5u8; 16];
        let old = Old { struct_size: size_of::<Old>() as u32, a: 0 };
        // SAFETY: 16 bytes as two `u64`s, for the alignment of `New`; any bytes are a valid `u64`.
        let mut aligned: [u64; 2] = unsafe { std::mem::transmute(target) };
        // SAFETY: an `Old` (8 bytes, 4-aligned) fits at the start of the 16 aligned bytes.
        unsafe { aligned.as_mut_ptr().cast::<Old>().write(old) };
        let ptr = aligned.as_mut_ptr().cast::<New>();
        write_versioned(ptr, New { struct_size: 99, a: 4, b: u64::MAX }, "options").unwrap();
        // SAFETY: any 16 bytes are 16 valid `u8`s.
        target = unsafe { std::mem::transmute::<[u64; 2], [u8; 16]>(aligned) };
        assert_eq!(&target[..4], &8u32.to_ne_bytes(), "struct_size kept");
        assert_eq!(&target[4..8], &4u32.to_ne_bytes());
        assert_eq!(&target[8..], &[0xa5; 8], "nothing written past the caller's struct");
    }
}
