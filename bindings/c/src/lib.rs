//! libuform: the C ABI of the UForm runtime. Every `extern "C"` function is generated from the IDL into
//! `generated/c/ffi.rs` and included here; [`runtime`], [`handles`] and [`versioned`] hold the hand-written machinery
//! it stands on.

#![allow(non_camel_case_types, clippy::missing_safety_doc, clippy::redundant_closure)]

mod handles;
mod runtime;
mod versioned;

use handles::*;
use runtime::*;
use std::ffi::c_char;
use uform_core::Error;
use versioned::*;

include!("../../../generated/c/ffi.rs");

/// The message of the calling thread's last failed call; "" when none failed yet.
#[no_mangle]
pub extern "C" fn uform_last_error_message() -> *const c_char {
    runtime::last_error_message()
}

/// The kind of a status as every language spells it, like "invalid_argument"; NULL outside the enum.
#[no_mangle]
pub extern "C" fn uform_status_name(status: uform_status_t) -> *const c_char {
    runtime::status_name(status, status_of)
}

/// Frees a matrix a verb returned, and zeroes it; NULL, a zeroed matrix and a second free do nothing.
#[no_mangle]
pub extern "C" fn uform_f32_matrix_free(matrix: *mut uform_f32_matrix_t) {
    let _ = std::panic::catch_unwind(|| runtime::f32_matrix_free(matrix));
}
