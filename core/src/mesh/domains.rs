//! NVLink multicast domains and the tier, from the GPU records of every member of a run: a pure function of
//! those records, so recorded data tests it without a GPU.
//!
//! A GPU is *switch-capable* when a multicast object could really be made with it (the attribute said yes and
//! `cuMulticastCreate` + `cuMulticastAddDevice` succeeded) and NVML reports its fabric registration `Completed`
//! (a GPU whose driver has no fabric query counts when the probe succeeded). The tier is `SwitchReduced` when
//! every GPU of the run is switch-capable; then domains are the groups of GPUs sharing a fabric cluster UUID and
//! clique id (a cluster UUID of zeros names no cluster, so such GPUs group only with their own host's). Otherwise
//! the tier is `PeerRead` and each host's GPUs form its own domain, since peers read each other's memory only
//! within a host.
//!
//! `gpusPerMultimemDomain`, when given, splits each of those groups into domains of that many GPUs; a group it
//! does not divide is an invalid argument, and a value larger than a group leaves the group whole (two 8-GPU
//! HGX hosts without a shared fabric are two domains whatever it says).

use super::record::GpuRecord;
use crate::devices::fabric::Fabric;
use crate::error::{Error, Result};
use crate::types::MultimemTier;

/// One member of a run, as the grouping sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Member<'a> {
    pub index: u32,
    pub host: &'a str,
    pub pid: u32,
    pub gpus: &'a [GpuRecord],
}

impl Member<'_> {
    fn who(&self) -> String {
        format!("index {} (host {}, pid {})", self.index, self.host, self.pid)
    }
}

/// The run's multimem domains: the tier and the size of each domain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Domains {
    pub tier: MultimemTier,
    pub sizes: Vec<u32>,
}

impl Domains {
    /// GPUs per domain as `MeshDescription` reports it: the largest domain's count, 0 without GPUs.
    pub fn gpus_per_domain(&self) -> u32 {
        self.sizes.iter().copied().max().unwrap_or(0)
    }
}

/// Whether a GPU may take part in a switch-reduced domain; see the module documentation.
pub(crate) fn switch_capable(gpu: &GpuRecord) -> bool {
    gpu.multicast && gpu.fabric.as_ref().is_none_or(Fabric::completed)
}

/// Checks that no physical GPU (by UUID) is claimed twice, by one member or by two: a conflict naming both.
pub(crate) fn check_unique_gpus(members: &[Member]) -> Result<()> {
    let mut seen: Vec<(&str, &Member, u32)> = Vec::new();
    for member in members {
        for gpu in member.gpus {
            let Some(uuid) = gpu.uuid.as_deref() else { continue };
            if let Some((_, first, ordinal)) = seen.iter().find(|(u, _, _)| *u == uuid) {
                return Err(Error::conflict(format!(
                    "GPU {uuid} is claimed twice: by {} as device {ordinal} and by {} as device {}; every rank needs \
                     its own GPU (under torchrun or SLURM {} takes the one of LOCAL_RANK / SLURM_LOCALID, or pass {})",
                    first.who(),
                    member.who(),
                    gpu.vendor_ordinal,
                    crate::path::name("for_vram()"),
                    crate::path::name("config.devices")
                )));
            }
            seen.push((uuid, member, gpu.vendor_ordinal));
        }
    }
    Ok(())
}

/// Groups the GPUs of `members` into multimem domains; see the module documentation.
pub(crate) fn group(members: &[Member], gpus_per_domain: Option<u32>) -> Result<Domains> {
    let all: Vec<(&Member, &GpuRecord)> = members.iter().flat_map(|m| m.gpus.iter().map(move |g| (m, g))).collect();
    let switch = !all.is_empty() && all.iter().all(|(_, gpu)| switch_capable(gpu));
    let mut groups: Vec<(String, u32)> = Vec::new();
    for (member, gpu) in &all {
        let key = match (&gpu.fabric, switch) {
            (Some(fabric), true) if fabric.names_a_cluster() => {
                format!("cluster {} clique {}", fabric.cluster_uuid, fabric.clique_id)
            }
            (Some(fabric), true) => format!("host {} clique {}", member.host, fabric.clique_id),
            _ => format!("host {}", member.host),
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => groups.push((key, 1)),
        }
    }
    let mut sizes = Vec::new();
    for (key, n) in groups {
        match gpus_per_domain {
            Some(g) if g < n && n % g != 0 => {
                return Err(Error::invalid_argument(
                    "options.gpus_per_multimem_domain",
                    format!(
                        "must divide every NVLink group into whole multimem domains, got {g} for the {n} GPUs of {key}"
                    ),
                ))
            }
            Some(g) if g < n => sizes.extend(std::iter::repeat_n(g, (n / g) as usize)),
            _ => sizes.push(n),
        }
    }
    Ok(Domains { tier: if switch { MultimemTier::SwitchReduced } else { MultimemTier::PeerRead }, sizes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    /// An H100/H200/B200 record as a host would write it; `cluster` 0 is the zero UUID.
    fn gpu(ordinal: u32, uuid: &str, multicast: bool, fabric: Option<(u8, u8, u32)>) -> GpuRecord {
        GpuRecord {
            vendor: 1,
            vendor_ordinal: ordinal,
            gpu_class: Some("nvidia-hopper".into()),
            compute_units: 132,
            memory_bytes: 1 << 37,
            name: "NVIDIA H200".into(),
            multicast_attribute: true,
            multicast,
            uuid: Some(uuid.into()),
            fabric: fabric.map(|(state, cluster, clique)| Fabric::new(state, 0, [cluster; 16], clique)),
        }
    }

    fn node(host: &str, count: u32, multicast: bool, fabric: Option<(u8, u8, u32)>) -> Vec<GpuRecord> {
        (0..count).map(|i| gpu(i, &format!("GPU-{host}-{i}"), multicast, fabric)).collect()
    }

    fn member<'a>(index: u32, host: &'a str, gpus: &'a [GpuRecord]) -> Member<'a> {
        Member { index, host, pid: 100 + index, gpus }
    }

    #[test]
    fn two_hgx_nodes_without_a_shared_fabric_are_two_domains_whatever_the_option_says() {
        // Each HGX board's NVSwitches complete registration with a zero cluster UUID and clique 0.
        let (a, b) = (node("a", 8, true, Some((3, 0, 0))), node("b", 8, true, Some((3, 0, 0))));
        let members = [member(0, "a", &a), member(1, "b", &b)];
        for option in [None, Some(16), Some(8)] {
            let d = group(&members, option).unwrap();
            assert_eq!((d.tier, d.sizes.clone()), (MultimemTier::SwitchReduced, vec![8, 8]), "{option:?}");
        }
        assert_eq!(group(&members, Some(4)).unwrap().sizes, vec![4, 4, 4, 4]);
        let e = group(&members, Some(3)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().starts_with("`options.gpus_per_multimem_domain`") && e.message().contains("host a"), "{e}");
    }

    #[test]
    fn an_nvl72_rack_sharing_one_clique_is_one_domain() {
        // 18 trays of 4 GPUs, one process per tray, all in cluster 0x77.. clique 5.
        let trays: Vec<(String, Vec<GpuRecord>)> =
            (0..18).map(|t| (format!("tray{t}"), node(&format!("tray{t}"), 4, true, Some((3, 0x77, 5))))).collect();
        let members: Vec<Member> = trays.iter().enumerate().map(|(i, (h, g))| member(i as u32, h, g)).collect();
        let d = group(&members, None).unwrap();
        assert_eq!((d.tier, d.sizes.clone(), d.gpus_per_domain()), (MultimemTier::SwitchReduced, vec![72], 72));
        // Two cliques of one cluster are two domains.
        let mut split = trays.clone();
        for (_, gpus) in &mut split[9..] {
            for g in gpus.iter_mut() {
                g.fabric.as_mut().unwrap().clique_id = 6;
            }
        }
        let members: Vec<Member> = split.iter().enumerate().map(|(i, (h, g))| member(i as u32, h, g)).collect();
        assert_eq!(group(&members, None).unwrap().sizes, vec![36, 36]);
    }

    #[test]
    fn an_unprovisioned_node_is_peer_read() {
        // The attribute says yes, but the fabric never completed registration.
        let (a, b) = (node("a", 8, true, Some((3, 0, 0))), node("b", 8, true, Some((1, 0, 0))));
        let d = group(&[member(0, "a", &a), member(1, "b", &b)], None).unwrap();
        assert_eq!((d.tier, d.sizes), (MultimemTier::PeerRead, vec![8, 8]));
        // The attribute says yes, the fabric is complete, but cuMulticastAddDevice failed.
        let c = node("c", 8, false, Some((3, 0, 0)));
        assert_eq!(group(&[member(0, "c", &c)], None).unwrap().tier, MultimemTier::PeerRead);
        // A registration that completed with an error status is not complete.
        let mut d8 = node("d", 8, true, Some((3, 0, 0)));
        d8[3].fabric.as_mut().unwrap().status = 999;
        assert_eq!(group(&[member(0, "d", &d8)], None).unwrap().tier, MultimemTier::PeerRead);
        // No fabric query (older driver) but a working probe: switch-reduced within the host.
        let e = node("e", 4, true, None);
        assert_eq!(group(&[member(0, "e", &e)], None).unwrap().tier, MultimemTier::SwitchReduced);
    }

    #[test]
    fn one_process_per_gpu_groups_by_host_not_by_record() {
        // torchrun on two 4-GPU hosts: eight records of one GPU each.
        let gpus: Vec<(String, Vec<GpuRecord>)> = (0..8)
            .map(|rank| {
                let host = if rank < 4 { "a" } else { "b" };
                (host.to_string(), vec![gpu(rank % 4, &format!("GPU-{host}-{rank}"), true, Some((3, 0, 0)))])
            })
            .collect();
        let members: Vec<Member> = gpus.iter().enumerate().map(|(i, (h, g))| member(i as u32, h, g)).collect();
        let d = group(&members, None).unwrap();
        assert_eq!((d.tier, d.sizes), (MultimemTier::SwitchReduced, vec![4, 4]));
    }

    #[test]
    fn no_gpus_no_domains() {
        let d = group(&[member(0, "a", &[])], Some(4)).unwrap();
        assert_eq!((d.tier, d.sizes.clone(), d.gpus_per_domain()), (MultimemTier::PeerRead, vec![], 0));
    }

    #[test]
    fn one_gpu_claimed_by_two_ranks_is_a_conflict_naming_both() {
        let a = vec![gpu(0, "GPU-same", true, None)];
        let b = vec![gpu(0, "GPU-same", true, None)];
        let e = check_unique_gpus(&[member(0, "h", &a), member(1, "h", &b)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert!(e.message().contains("GPU-same") && e.message().contains("index 0") && e.message().contains("index 1"));
        // Across hosts too, and within one record.
        let twice = vec![gpu(0, "GPU-x", true, None), gpu(1, "GPU-x", true, None)];
        assert!(check_unique_gpus(&[member(3, "h", &twice)]).unwrap_err().message().contains("device 1"));
        let c = node("c", 8, true, None);
        let d = node("d", 8, true, None);
        assert!(check_unique_gpus(&[member(0, "c", &c), member(1, "d", &d)]).is_ok());
        // A GPU without a UUID (AMD) is never a duplicate.
        let mut anon = node("e", 2, false, None);
        anon.iter_mut().for_each(|g| g.uuid = None);
        assert!(check_unique_gpus(&[member(0, "e", &anon), member(1, "e", &anon)]).is_ok());
    }
}
