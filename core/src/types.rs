//! The records and enums of the IDL, as plain Rust values. Every binding converts to and from these. They are
//! generated from `idl/uform.yaml` into `generated/rust/types.rs` by `cargo xtask codegen`; edit the IDL, not them.
//! `core/generated` is a symbolic link to `generated/rust`, so the files are inside the crate: maturin's sdist copies
//! the crate's files (following the link), and a build from the sdist finds them.

include!("../generated/types.rs");
