//! Helpers the benchmark binaries share.

pub mod peak;
