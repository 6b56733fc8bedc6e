//! Users and groups, as the trust checks of [`super::folder`] need them: names for messages, group membership, and
//! the `group` option resolved on this host.

use crate::error::{Error, Result};
use std::ffi::{CStr, CString};
use std::mem::MaybeUninit;

/// The group whose members may join a run (the `group` option), resolved on this host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    pub gid: u32,
    pub name: String,
}

impl std::fmt::Display for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "group {} ({})", self.gid, self.name)
    }
}

/// Resolves the `group` option: a group name, or a numeric gid; this process must belong to it.
pub(crate) fn resolve_group(option: &str) -> Result<Group> {
    let entry = match option.parse::<u32>() {
        Ok(gid) => {
            group_entry(GroupKey::Gid(gid)).unwrap_or(GroupEntry { gid, name: gid.to_string(), members: vec![] })
        }
        Err(_) => group_entry(GroupKey::Name(option)).ok_or_else(|| {
            Error::invalid_argument("options.group", format!("names no group known to this host, got {option:?}"))
        })?,
    };
    // SAFETY: plain queries of this process's credentials with a buffer of the size asked for.
    let member = unsafe {
        let euid = libc::geteuid();
        let count = libc::getgroups(0, std::ptr::null_mut());
        let mut groups = vec![0 as libc::gid_t; count.max(0) as usize];
        let count = libc::getgroups(groups.len() as libc::c_int, groups.as_mut_ptr());
        euid == 0 || libc::getegid() == entry.gid || groups[..count.max(0) as usize].contains(&entry.gid)
    };
    if !member {
        return Err(Error::invalid_argument(
            "options.group",
            format!("names group {} ({}), which this process's user is not a member of", entry.gid, entry.name),
        ));
    }
    Ok(Group { gid: entry.gid, name: entry.name })
}

/// `uid 1000 (alice)`, or `uid 1000` when the name is unknown.
pub(crate) fn user_name(uid: u32) -> String {
    match passwd_entry(uid) {
        Some((name, _)) => format!("uid {uid} ({name})"),
        None => format!("uid {uid}"),
    }
}

pub(crate) fn group_name(gid: u32) -> String {
    match group_entry(GroupKey::Gid(gid)) {
        Some(entry) => format!("gid {gid} ({})", entry.name),
        None => format!("gid {gid}"),
    }
}

/// Whether user `uid` belongs to group `gid`, as its primary group or as a listed member.
pub(crate) fn user_in_group(uid: u32, gid: u32) -> bool {
    let Some((name, primary)) = passwd_entry(uid) else { return false };
    primary == gid || group_entry(GroupKey::Gid(gid)).is_some_and(|g| g.members.contains(&name))
}

/// A user's name and primary group.
fn passwd_entry(uid: u32) -> Option<(String, u32)> {
    let mut buffer = vec![0 as libc::c_char; 4096];
    loop {
        let mut entry = MaybeUninit::<libc::passwd>::zeroed();
        let mut result = std::ptr::null_mut();
        // SAFETY: valid pointers and a buffer valid for its length.
        let rc = unsafe { libc::getpwuid_r(uid, entry.as_mut_ptr(), buffer.as_mut_ptr(), buffer.len(), &mut result) };
        if rc == libc::ERANGE && buffer.len() < 1 << 20 {
            buffer.resize(buffer.len() * 2, 0);
            continue;
        }
        if rc != 0 || result.is_null() {
            return None;
        }
        // SAFETY: getpwuid_r filled the entry, whose strings live in `buffer`.
        let entry = unsafe { entry.assume_init() };
        // SAFETY: `pw_name` is a NUL-terminated string in `buffer`, which outlives this line.
        let name = unsafe { CStr::from_ptr(entry.pw_name) }.to_string_lossy().into_owned();
        return Some((name, entry.pw_gid));
    }
}

enum GroupKey<'a> {
    Gid(u32),
    Name(&'a str),
}

struct GroupEntry {
    gid: u32,
    name: String,
    members: Vec<String>,
}

fn group_entry(key: GroupKey<'_>) -> Option<GroupEntry> {
    let name = match &key {
        GroupKey::Name(name) => Some(CString::new(*name).ok()?),
        GroupKey::Gid(_) => None,
    };
    let mut buffer = vec![0 as libc::c_char; 4096];
    loop {
        let mut entry = MaybeUninit::<libc::group>::zeroed();
        let mut result = std::ptr::null_mut();
        // SAFETY: valid pointers and a buffer valid for its length.
        let rc = unsafe {
            match (&key, &name) {
                (GroupKey::Gid(gid), _) => {
                    libc::getgrgid_r(*gid, entry.as_mut_ptr(), buffer.as_mut_ptr(), buffer.len(), &mut result)
                }
                (_, Some(name)) => {
                    libc::getgrnam_r(name.as_ptr(), entry.as_mut_ptr(), buffer.as_mut_ptr(), buffer.len(), &mut result)
                }
                (GroupKey::Name(_), None) => return None,
            }
        };
        if rc == libc::ERANGE && buffer.len() < 1 << 20 {
            buffer.resize(buffer.len() * 2, 0);
            continue;
        }
        if rc != 0 || result.is_null() {
            return None;
        }
        // SAFETY: the call filled the entry, whose strings and member list live in `buffer`.
        unsafe {
            let entry = entry.assume_init();
            let mut members = Vec::new();
            let mut member = entry.gr_mem;
            while !member.is_null() && !(*member).is_null() {
                members.push(CStr::from_ptr(*member).to_string_lossy().into_owned());
                member = member.add(1);
            }
            let name = CStr::from_ptr(entry.gr_name).to_string_lossy().into_owned();
            return Some(GroupEntry { gid: entry.gr_gid, name, members });
        }
    }
}
