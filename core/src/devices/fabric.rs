//! A GPU's NVLink fabric as NVML reports it (`nvmlDeviceGetGpuFabricInfoV`), and what a mesh may conclude from it.
//!
//! GPUs whose fabric registration is complete (state `Completed`, status success) and that report the same
//! cluster UUID and clique id share one NVLink multicast domain: an HGX board's NVSwitches, or a whole NVL72
//! rack. A cluster UUID of all zeros names no cluster: such GPUs only share a domain with GPUs of their own host.

use serde::{Deserialize, Serialize};

/// `NVML_GPU_FABRIC_STATE_COMPLETED`: the GPU is registered with the fabric manager.
pub const STATE_COMPLETED: u8 = 3;

/// One GPU's fabric, as NVML reports it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct Fabric {
    /// `nvmlGpuFabricState_t`: 0 not supported, 1 not started, 2 in progress, 3 completed.
    pub state: u8,
    /// The `nvmlReturn_t` of the registration; 0 is success.
    pub status: i32,
    /// The cluster UUID as 32 lowercase hex digits; all zeros when the GPU is in no multi-node cluster.
    pub cluster_uuid: String,
    pub clique_id: u32,
}

impl Fabric {
    pub fn new(state: u8, status: i32, cluster_uuid: [u8; 16], clique_id: u32) -> Fabric {
        Fabric { state, status, cluster_uuid: cluster_uuid.iter().map(|b| format!("{b:02x}")).collect(), clique_id }
    }

    /// Whether the fabric manager finished registering the GPU, successfully.
    pub fn completed(&self) -> bool {
        self.state == STATE_COMPLETED && self.status == 0
    }

    /// Whether the cluster UUID names a cluster (is not all zeros): only then can GPUs of different hosts share
    /// a domain.
    pub fn names_a_cluster(&self) -> bool {
        self.cluster_uuid.bytes().any(|b| b != b'0')
    }

    /// How the state reads in messages.
    pub fn describe(&self) -> String {
        let state = match self.state {
            0 => "not supported",
            1 => "not started",
            2 => "in progress",
            STATE_COMPLETED => "completed",
            _ => "unknown",
        };
        format!("fabric {state} (status {}), cluster {}, clique {}", self.status, self.cluster_uuid, self.clique_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completed_needs_the_state_and_a_successful_status() {
        let uuid = [0xab; 16];
        assert!(Fabric::new(3, 0, uuid, 7).completed());
        assert!(!Fabric::new(3, 999, uuid, 7).completed());
        assert!(!Fabric::new(2, 0, uuid, 7).completed());
        assert!(!Fabric::new(0, 0, uuid, 7).completed());
    }

    #[test]
    fn a_zero_cluster_names_none() {
        let f = Fabric::new(3, 0, [0; 16], 0);
        assert_eq!(f.cluster_uuid, "0".repeat(32));
        assert!(!f.names_a_cluster());
        let mut uuid = [0; 16];
        uuid[15] = 1;
        assert!(Fabric::new(3, 0, uuid, 0).names_a_cluster());
        assert!(Fabric::new(1, 0, uuid, 2).describe().contains("not started"));
    }
}
