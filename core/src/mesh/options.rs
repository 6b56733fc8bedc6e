//! Checking [`MeshOptions`] and building them from a launcher's environment.

use crate::error::{Error, Result};
use crate::path::name;
use crate::types::MeshOptions;
use std::path::PathBuf;
use std::time::Duration;

/// The timeout when `timeoutSeconds` is absent (the IDL's default).
pub(crate) const DEFAULT_TIMEOUT_SECONDS: u32 = MeshOptions::DEFAULT_TIMEOUT_SECONDS;

/// Checked options: what bootstrap acts on.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub index: u32,
    pub count: u32,
    /// `None`: derive from this host's GPUs.
    pub gpus_per_multimem_domain: Option<u32>,
    /// `Some` only with peers: `directory/job`, and its parent `directory`.
    pub rendezvous: Option<Rendezvous>,
}

#[derive(Clone, Debug)]
pub(crate) struct Rendezvous {
    pub directory: PathBuf,
    pub job: String,
    pub timeout: Duration,
    /// The `group` option as given (a name or a gid), resolved when joining.
    pub group: Option<String>,
}

/// Checks `options` in the order a reader would: zeros, then the count and the index, then where peers meet.
pub(crate) fn plan(options: &MeshOptions) -> Result<Plan> {
    if options.host_domain_count == Some(0) {
        return Err(Error::invalid_argument("options.host_domain_count", "must be at least 1, got 0"));
    }
    if options.timeout_seconds == Some(0) {
        return Err(Error::invalid_argument("options.timeout_seconds", "must be at least 1, got 0"));
    }
    if options.gpus_per_multimem_domain == Some(0) {
        return Err(Error::invalid_argument("options.gpus_per_multimem_domain", "must be at least 1, got 0"));
    }
    let count = options.host_domain_count.unwrap_or(MeshOptions::DEFAULT_HOST_DOMAIN_COUNT);
    // Absent derives 0, as the IDL documents: in C a zero field means absent, so index 0 must be expressible
    // as absent. Two processes that both take 0 meet as a duplicate index, which bootstrap reports as a conflict.
    let index = options.host_domain_index.unwrap_or(MeshOptions::DEFAULT_HOST_DOMAIN_INDEX);
    if index >= count {
        return Err(Error::invalid_argument(
            "options.host_domain_index",
            format!("must be less than {} {count}, got {index}", name("options.host_domain_count")),
        ));
    }
    let rendezvous = if count == 1 {
        None
    } else {
        let directory = match options.directory.as_deref() {
            None => {
                return Err(Error::invalid_argument(
                    "options.directory",
                    format!(
                        "is required when {} is {count}: peers meet in a directory they all see",
                        name("options.host_domain_count")
                    ),
                ))
            }
            Some("") => return Err(Error::invalid_argument("options.directory", "must not be empty")),
            Some(d) if d.contains('\0') => {
                return Err(Error::invalid_argument(
                    "options.directory",
                    format!("must not contain a NUL byte, got {d:?}"),
                ))
            }
            Some(d) => PathBuf::from(d),
        };
        let job = match options.job.as_deref() {
            None => {
                return Err(Error::invalid_argument(
                    "options.job",
                    format!(
                        "is required when {} is {count}: it names the run's directory",
                        name("options.host_domain_count")
                    ),
                ))
            }
            Some(job) => check_job(job)?,
        };
        let group = match options.group.as_deref() {
            Some("") => return Err(Error::invalid_argument("options.group", "must not be empty")),
            Some(g) if g.contains('\0') => {
                return Err(Error::invalid_argument("options.group", format!("must not contain a NUL byte, got {g:?}")))
            }
            other => other.map(str::to_string),
        };
        let seconds = options.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS);
        Some(Rendezvous { directory, job, timeout: Duration::from_secs(u64::from(seconds)), group })
    };
    Ok(Plan { index, count, gpus_per_multimem_domain: options.gpus_per_multimem_domain, rendezvous })
}

/// A job names one directory entry: not empty, no separator, no NUL, not `.` or `..`.
fn check_job(job: &str) -> Result<String> {
    if job.is_empty() {
        return Err(Error::invalid_argument("options.job", "must not be empty"));
    }
    if job == "." || job == ".." {
        return Err(Error::invalid_argument("options.job", format!("must name a directory entry, got {job:?}")));
    }
    if let Some(c) = job.chars().find(|c| matches!(c, '/' | '\\' | '\0')) {
        return Err(Error::invalid_argument("options.job", format!("must not contain {c:?}, got {job:?}")));
    }
    Ok(job.to_string())
}

/// [`crate::mesh::mesh_options_from_environment`] over any variable lookup, so tests can pass a map.
///
/// torchrun (`RANK`, `WORLD_SIZE`, `TORCHELASTIC_RUN_ID`) wins over SLURM (`SLURM_PROCID`, `SLURM_NTASKS`,
/// `SLURM_JOB_ID`, `SLURM_STEP_ID`), because torchrun inside a SLURM allocation describes the processes that
/// actually meet. A launcher counts as present when its index or its count is set; then both must be set and be
/// decimal numbers. The job is `torchrun-<run id>` or `slurm-<job id>-<step id>` (`slurm-<job id>` without a step),
/// with any `/`, `\` or NUL in the ids replaced by `_`; it is absent when the launcher sets no run or job id, so
/// bootstrap then asks for one. `directory` and the other options are left absent for the caller to fill in.
///
/// `gpusPerMultimemDomain` stays absent: torchrun runs one process per GPU, and an absent value lets bootstrap
/// group the GPUs of every record by their NVLink fabric (all ranks of one HGX host, or of one NVL72 clique, in
/// one domain), where deriving it from each process's own GPU count would give domains of one GPU.
pub fn mesh_options_from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Option<MeshOptions>> {
    let torchrun = launcher(&lookup, "RANK", "WORLD_SIZE")?;
    if let Some((index, count)) = torchrun {
        let job =
            lookup("TORCHELASTIC_RUN_ID").filter(|s| !s.is_empty()).map(|id| format!("torchrun-{}", sanitize(&id)));
        return Ok(Some(MeshOptions {
            host_domain_index: Some(index),
            host_domain_count: Some(count),
            job,
            ..MeshOptions::default()
        }));
    }
    let slurm = launcher(&lookup, "SLURM_PROCID", "SLURM_NTASKS")?;
    if let Some((index, count)) = slurm {
        let job = lookup("SLURM_JOB_ID").filter(|s| !s.is_empty()).map(|id| {
            match lookup("SLURM_STEP_ID").filter(|s| !s.is_empty()) {
                Some(step) => format!("slurm-{}-{}", sanitize(&id), sanitize(&step)),
                None => format!("slurm-{}", sanitize(&id)),
            }
        });
        return Ok(Some(MeshOptions {
            host_domain_index: Some(index),
            host_domain_count: Some(count),
            job,
            ..MeshOptions::default()
        }));
    }
    Ok(None)
}

fn launcher(lookup: &impl Fn(&str) -> Option<String>, index: &str, count: &str) -> Result<Option<(u32, u32)>> {
    match (lookup(index), lookup(count)) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(Error::invalid_as_spelled(count, format!("is not set although `{index}` is"))),
        (None, Some(_)) => Err(Error::invalid_as_spelled(index, format!("is not set although `{count}` is"))),
        (Some(i), Some(c)) => Ok(Some((number(index, &i)?, number(count, &c)?))),
    }
}

fn number(variable: &str, value: &str) -> Result<u32> {
    let trimmed = value.trim();
    if trimmed.is_empty() || !trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::invalid_as_spelled(
            variable,
            format!("must be a non-negative decimal number, got {value:?}"),
        ));
    }
    trimmed
        .parse()
        .map_err(|_| Error::invalid_as_spelled(variable, format!("is out of range for a 32-bit count, got {value:?}")))
}

fn sanitize(id: &str) -> String {
    id.chars().map(|c| if matches!(c, '/' | '\\' | '\0') { '_' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use std::collections::HashMap;

    fn from(pairs: &[(&str, &str)]) -> Result<Option<MeshOptions>> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        mesh_options_from_lookup(|name| map.get(name).cloned())
    }

    fn invalid(options: MeshOptions, argument: &str) {
        let err = plan(&options).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
        assert_eq!(err.path(), crate::path::parse(&format!("options.{argument}")), "{err}");
        assert!(err.message().starts_with(&format!("`options.{argument}`")), "{err}");
    }

    #[test]
    fn mesh_options_zero_and_absent() {
        let p = plan(&MeshOptions::default()).unwrap();
        assert_eq!((p.index, p.count), (0, 1));
        assert!(p.rendezvous.is_none());
        invalid(MeshOptions { host_domain_count: Some(0), ..Default::default() }, "host_domain_count");
        invalid(MeshOptions { timeout_seconds: Some(0), ..Default::default() }, "timeout_seconds");
        invalid(MeshOptions { gpus_per_multimem_domain: Some(0), ..Default::default() }, "gpus_per_multimem_domain");
        invalid(MeshOptions { host_domain_index: Some(1), ..Default::default() }, "host_domain_index");
        invalid(
            MeshOptions { host_domain_index: Some(1), host_domain_count: Some(1), ..Default::default() },
            "host_domain_index",
        );
        // No peers: directory and job are ignored, even when odd.
        let p =
            plan(&MeshOptions { job: Some("..".into()), host_domain_count: Some(1), ..Default::default() }).unwrap();
        assert!(p.rendezvous.is_none());
    }

    #[test]
    fn mesh_options_with_peers_need_directory_job_and_index() {
        let ok = MeshOptions {
            host_domain_index: Some(1),
            host_domain_count: Some(2),
            directory: Some("/tmp".into()),
            job: Some("run 7".into()),
            ..Default::default()
        };
        let p = plan(&ok).unwrap();
        let r = p.rendezvous.unwrap();
        assert_eq!(r.timeout, Duration::from_secs(120));
        assert_eq!((r.directory, r.job.as_str(), r.group), (PathBuf::from("/tmp"), "run 7", None));
        let grouped = plan(&MeshOptions { group: Some("staff".into()), ..ok.clone() }).unwrap();
        assert_eq!(grouped.rendezvous.unwrap().group.as_deref(), Some("staff"));
        invalid(MeshOptions { group: Some(String::new()), ..ok.clone() }, "group");
        invalid(MeshOptions { group: Some("a\0b".into()), ..ok.clone() }, "group");
        assert_eq!(plan(&MeshOptions { host_domain_index: None, ..ok.clone() }).map(|p| p.index).ok(), Some(0));
        invalid(MeshOptions { host_domain_index: Some(2), ..ok.clone() }, "host_domain_index");
        invalid(MeshOptions { directory: None, ..ok.clone() }, "directory");
        invalid(MeshOptions { directory: Some(String::new()), ..ok.clone() }, "directory");
        invalid(MeshOptions { job: None, ..ok.clone() }, "job");
        for bad in ["", ".", "..", "a/b", "a\\b", "a\0b"] {
            invalid(MeshOptions { job: Some(bad.into()), ..ok.clone() }, "job");
        }
    }

    #[test]
    fn mesh_options_from_torchrun_and_slurm() {
        assert_eq!(from(&[]).unwrap(), None);
        let t = from(&[("RANK", "3"), ("WORLD_SIZE", "8"), ("TORCHELASTIC_RUN_ID", "abc/1"), ("SLURM_PROCID", "x")])
            .unwrap()
            .unwrap();
        assert_eq!((t.host_domain_index, t.host_domain_count), (Some(3), Some(8)));
        assert_eq!(t.job.as_deref(), Some("torchrun-abc_1"));
        assert_eq!(t.directory, None);
        // One process per GPU: domains come from the fabric, never from one process's GPU count.
        assert_eq!(t.gpus_per_multimem_domain, None);
        assert_eq!(
            plan(&MeshOptions { directory: Some("/tmp".into()), ..t.clone() }).unwrap().gpus_per_multimem_domain,
            None
        );
        let s = from(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "4"), ("SLURM_JOB_ID", "991"), ("SLURM_STEP_ID", "2")])
            .unwrap()
            .unwrap();
        assert_eq!((s.host_domain_index, s.host_domain_count), (Some(0), Some(4)));
        assert_eq!(s.job.as_deref(), Some("slurm-991-2"));
        let s = from(&[("SLURM_PROCID", "1"), ("SLURM_NTASKS", "2"), ("SLURM_JOB_ID", "5")]).unwrap().unwrap();
        assert_eq!(s.job.as_deref(), Some("slurm-5"));
        let t = from(&[("RANK", "0"), ("WORLD_SIZE", "1")]).unwrap().unwrap();
        assert_eq!(t.job, None);
    }

    #[test]
    fn mesh_options_from_malformed_environment() {
        for (pairs, variable, value) in [
            (&[("RANK", "x1"), ("WORLD_SIZE", "2")][..], "RANK", "x1"),
            (&[("RANK", "1"), ("WORLD_SIZE", "-2")][..], "WORLD_SIZE", "-2"),
            (&[("RANK", "1"), ("WORLD_SIZE", "99999999999")][..], "WORLD_SIZE", "99999999999"),
            (&[("SLURM_PROCID", ""), ("SLURM_NTASKS", "2")][..], "SLURM_PROCID", ""),
        ] {
            let err = from(pairs).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument);
            assert!(err.message().starts_with(&format!("`{variable}`")), "{err}");
            assert!(err.message().contains(&format!("{value:?}")), "{err}");
        }
        let err = from(&[("RANK", "1")]).unwrap_err();
        assert!(err.message().starts_with("`WORLD_SIZE`"), "{err}");
    }
}
