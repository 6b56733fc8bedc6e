//! What a process knows about itself and about other processes on its own machine: host name, machine identity,
//! pid, process start time, liveness, and random nonces.

use std::sync::atomic::{AtomicU64, Ordering};

/// This process, as a mesh record names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProcessIdentity {
    /// `gethostname`, for messages.
    pub host: String,
    /// The kernel boot id and pid namespace, or empty when unknown: two records with the same non-empty machine
    /// identity see the same process table, so one can check whether the other's process still lives.
    pub machine: String,
    pub pid: u32,
    /// Clock ticks since boot when the process started (`/proc/self/stat` field 22), 0 when unknown.
    pub start_time: u64,
}

impl ProcessIdentity {
    pub fn current() -> ProcessIdentity {
        let pid = std::process::id();
        ProcessIdentity {
            host: host_name(),
            machine: machine_identity(),
            pid,
            start_time: start_time(pid).unwrap_or(0),
        }
    }
}

/// The host name, or "unknown-host".
pub(crate) fn host_name() -> String {
    let mut buffer = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that many bytes.
    let rc = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
    if rc != 0 {
        return "unknown-host".to_string();
    }
    let end = buffer.iter().position(|b| *b == 0).unwrap_or(buffer.len());
    let name = String::from_utf8_lossy(&buffer[..end]).into_owned();
    if name.is_empty() {
        "unknown-host".to_string()
    } else {
        name
    }
}

#[cfg(target_os = "linux")]
fn machine_identity() -> String {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|s| s.trim().to_string());
    let namespace = std::fs::read_link("/proc/self/ns/pid").map(|p| p.to_string_lossy().into_owned());
    match (boot, namespace) {
        (Ok(boot), Ok(namespace)) if !boot.is_empty() => format!("{boot}/{namespace}"),
        _ => String::new(),
    }
}

#[cfg(not(target_os = "linux"))]
fn machine_identity() -> String {
    String::new()
}

/// The start time of `pid` in clock ticks since boot, and whether it is a zombie; `None` when there is no such process.
#[cfg(target_os = "linux")]
fn stat(pid: u32) -> Option<(u64, bool)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' are plain.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state); field 22 (starttime) is at index 19.
    let state = fields.first()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((start, matches!(*state, "Z" | "X" | "x")))
}

#[cfg(target_os = "linux")]
fn start_time(pid: u32) -> Option<u64> {
    stat(pid).map(|(start, _)| start)
}

#[cfg(not(target_os = "linux"))]
fn start_time(_pid: u32) -> Option<u64> {
    None
}

/// Whether the process `pid` that started at `start_time` still runs on this machine. A zombie counts as gone, and
/// so does a live process with a different start time (the pid was reused).
#[cfg(target_os = "linux")]
pub(crate) fn process_alive(pid: u32, start_time: u64) -> bool {
    match stat(pid) {
        None => false,
        Some((_, true)) => false,
        Some((start, false)) => start_time == 0 || start == start_time,
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn process_alive(pid: u32, _start_time: u64) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// 64 random bits: from the kernel when it answers, mixed with the clock, the pid and a counter in any case, so two
/// nonces of one process never repeat.
pub(crate) fn nonce() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut random = [0u8; 8];
    let mut value = 0u64;
    if std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut random)).is_ok() {
        value = u64::from_le_bytes(random);
    }
    let clock = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let mixed =
        splitmix(clock ^ (u64::from(std::process::id()) << 32) ^ splitmix(COUNTER.fetch_add(1, Ordering::Relaxed)));
    value ^ mixed
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_identified() {
        let me = ProcessIdentity::current();
        assert_eq!(me.pid, std::process::id());
        assert!(!me.host.is_empty());
        assert!(process_alive(me.pid, me.start_time));
        if cfg!(target_os = "linux") {
            assert!(me.start_time > 0);
            assert!(!me.machine.is_empty());
            assert!(!process_alive(me.pid, me.start_time + 1), "a different start time means a reused pid");
        }
    }

    #[test]
    fn nonces_differ() {
        assert_ne!(nonce(), nonce());
    }
}
