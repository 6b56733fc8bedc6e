//! The files of a job directory and how they are written.
//!
//! | name                             | written by            | holds                                        |
//! |----------------------------------|-----------------------|----------------------------------------------|
//! | `member-<index>-<nonce>.json`    | each joining process  | its [`Record`], written once, atomically     |
//! | `ready-<index>-<nonce>-<roster>` | each joining process  | nothing: the name says "I saw this roster"   |
//! | `done-<index>-<nonce>`           | `free` and drop       | nothing: the name says "I left"              |
//! | `closing-<roster>`               | the last one out      | nothing: claims the removal of the directory |
//! | `.tmp-<nonce>-<n>`               | a record being written| a partial record, never read                 |
//!
//! Markers carry their whole meaning in their names and appear atomically with one `open(O_CREAT | O_EXCL)`; a
//! record appears atomically with `rename` (both through [`super::folder`], relative to the job directory's descriptor
//! and never through a link). Nothing is ever rewritten in place, so a reader that caches what it
//! parsed by file name never reads a stale version.

use crate::devices::fabric::Fabric;
use crate::error::{Error, Result};
use crate::types::GpuDevice;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The version of the record layout; a record of another version is a conflict, never guessed at.
pub(crate) const RECORD_VERSION: u32 = 2;

/// One process's claim to a place in the run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Record {
    pub version: u32,
    pub job: String,
    /// Random per process and per bootstrap; the run's identity is the set of its members' nonces (the roster).
    pub nonce: String,
    pub host: String,
    pub machine: String,
    pub pid: u32,
    pub start_time: u64,
    pub index: u32,
    pub count: u32,
    /// The option, or 0 when it is absent (domains then follow the GPUs' fabric: see `domains`).
    pub gpus_per_multimem_domain: u32,
    pub gpus: Vec<GpuRecord>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct GpuRecord {
    pub vendor: u32,
    pub vendor_ordinal: u32,
    pub gpu_class: Option<String>,
    pub compute_units: u32,
    pub memory_bytes: u64,
    pub name: String,
    /// What `CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED` says.
    pub multicast_attribute: bool,
    /// Whether a multicast object could really be made with the device (attribute and probe).
    pub multicast: bool,
    /// The physical GPU, as NVML spells it (`GPU-...`); `None` where the driver gives none.
    pub uuid: Option<String>,
    /// The NVLink fabric NVML reports; `None` without NVML or a fabric query.
    pub fabric: Option<Fabric>,
}

impl GpuRecord {
    pub fn new(device: &GpuDevice) -> GpuRecord {
        GpuRecord {
            vendor: device.vendor as u32,
            vendor_ordinal: device.vendor_ordinal,
            gpu_class: device.gpu_class.clone(),
            compute_units: device.compute_units,
            memory_bytes: device.memory_bytes,
            name: device.name.clone(),
            multicast_attribute: crate::devices::multicast_supported(device),
            multicast: crate::devices::multicast_usable(device),
            uuid: crate::devices::gpu_uuid(device),
            fabric: crate::devices::gpu_fabric(device),
        }
    }
}

impl Record {
    /// Whether this record's process is known to be gone: it ran on `machine` (this process's machine identity,
    /// never an empty one, which proves nothing) and runs no more.
    pub fn gone_from(&self, machine: &str) -> bool {
        !machine.is_empty() && self.machine == machine && !super::host::process_alive(self.pid, self.start_time)
    }

    pub fn who(&self) -> String {
        format!("(host {}, pid {})", self.host, self.pid)
    }
}

/// What a file name in a job directory says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Name {
    Member { index: u32, nonce: String },
    Ready { index: u32, nonce: String, roster: String },
    Done { index: u32, nonce: String },
    Other,
}

pub(crate) fn member_name(index: u32, nonce: &str) -> String {
    format!("member-{index}-{nonce}.json")
}
pub(crate) fn ready_name(index: u32, nonce: &str, roster: &str) -> String {
    format!("ready-{index}-{nonce}-{roster}")
}
pub(crate) fn done_name(index: u32, nonce: &str) -> String {
    format!("done-{index}-{nonce}")
}
pub(crate) fn closing_name(roster: &str) -> String {
    format!("closing-{roster}")
}

pub(crate) fn parse_name(name: &str) -> Name {
    let parts = |rest: &str, n: usize| -> Option<Vec<String>> {
        let v: Vec<String> = rest.split('-').map(str::to_string).collect();
        (v.len() == n && v.iter().all(|p| !p.is_empty())).then_some(v)
    };
    if let Some(rest) = name.strip_prefix("member-").and_then(|r| r.strip_suffix(".json")) {
        if let Some(v) = parts(rest, 2) {
            if let Ok(index) = v[0].parse() {
                return Name::Member { index, nonce: v[1].clone() };
            }
        }
    } else if let Some(rest) = name.strip_prefix("ready-") {
        if let Some(v) = parts(rest, 3) {
            if let Ok(index) = v[0].parse() {
                return Name::Ready { index, nonce: v[1].clone(), roster: v[2].clone() };
            }
        }
    } else if let Some(rest) = name.strip_prefix("done-") {
        if let Some(v) = parts(rest, 2) {
            if let Ok(index) = v[0].parse() {
                return Name::Done { index, nonce: v[1].clone() };
            }
        }
    }
    Name::Other
}

/// The roster's identity: FNV-1a over the sorted `index:nonce` pairs, as 16 hex digits (stable across builds and
/// hosts, unlike the standard hasher).
pub(crate) fn roster_hash(members: &[(u32, &str)]) -> String {
    let mut sorted: Vec<(u32, &str)> = members.to_vec();
    sorted.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (index, nonce) in sorted {
        for byte in format!("{index}:{nonce};").bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// Parses a record read from `path` (named in messages).
pub(crate) fn parse_record(path: &Path, bytes: &[u8]) -> Result<Record> {
    let record: Record = serde_json::from_slice(bytes).map_err(|e| {
        Error::conflict(format!(
            "the mesh record `{}` cannot be read ({e}); it was not written by this version of UForm: remove it",
            path.display()
        ))
    })?;
    if record.version != RECORD_VERSION {
        return Err(Error::conflict(format!(
            "the mesh record `{}` has version {}, this process writes version {RECORD_VERSION}; every process of a run \
             must use the same UForm version (remove the file if it is left from an old run)",
            path.display(),
            record.version
        )));
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(parse_name(&member_name(3, "ab12")), Name::Member { index: 3, nonce: "ab12".into() });
        assert_eq!(
            parse_name(&ready_name(0, "ff", "0123")),
            Name::Ready { index: 0, nonce: "ff".into(), roster: "0123".into() }
        );
        assert_eq!(parse_name(&done_name(31, "9")), Name::Done { index: 31, nonce: "9".into() });
        for other in ["member-x-1.json", "member-1.json", ".tmp-1-2", "closing-12", "ready-1-2", "done-1-2-3"] {
            assert_eq!(parse_name(other), Name::Other, "{other}");
        }
    }

    #[test]
    fn roster_hash_ignores_order() {
        assert_eq!(roster_hash(&[(0, "a"), (1, "b")]), roster_hash(&[(1, "b"), (0, "a")]));
        assert_ne!(roster_hash(&[(0, "a"), (1, "b")]), roster_hash(&[(0, "a"), (1, "c")]));
        assert_eq!(roster_hash(&[]).len(), 16);
    }
}
