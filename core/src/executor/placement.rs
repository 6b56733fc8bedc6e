//! Where executor threads go: the machine's NUMA nodes and cores as hwloc reports them, read once per process,
//! and the pinning of one worker thread to one core.

use crate::error::{Error, Result};
use hwlocality::cpu::binding::CpuBindingFlags;
use hwlocality::cpu::cpuset::CpuSet;
use hwlocality::object::types::ObjectType;
use hwlocality::Topology;
use std::sync::OnceLock;

/// One NUMA node: its OS id and its cores, each as the OS indices of its processing units.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub os_index: u32,
    pub cores: Vec<Vec<usize>>,
}

/// The machine as the executor places threads on it.
#[derive(Debug)]
pub(crate) struct Machine {
    pub nodes: Vec<Node>,
    /// Why hwloc could not describe the machine, when it could not (then one node 0 with one core per CPU).
    pub fallback: Option<String>,
}

pub(crate) fn hwloc() -> Option<&'static Topology> {
    static TOPOLOGY: OnceLock<Option<Topology>> = OnceLock::new();
    TOPOLOGY.get_or_init(|| Topology::new().ok()).as_ref()
}

/// The machine, read through hwloc once per process (topology discovery takes milliseconds).
pub(crate) fn machine() -> &'static Machine {
    static MACHINE: OnceLock<Machine> = OnceLock::new();
    MACHINE.get_or_init(|| {
        let fallback = |why: String| Machine {
            nodes: vec![Node {
                os_index: 0,
                cores: (0..std::thread::available_parallelism().map_or(1, |n| n.get())).map(|c| vec![c]).collect(),
            }],
            fallback: Some(why),
        };
        let Some(topology) = hwloc() else { return fallback("hwloc could not load the topology".into()) };
        let mut nodes = Vec::new();
        for node in topology.objects_with_type(ObjectType::NUMANode) {
            let Some(os_index) = node.os_index() else { continue };
            let Some(node_set) = node.cpuset() else { continue };
            let node_set = node_set.clone_target();
            let cores = topology
                .objects_inside_cpuset_with_type(&node_set, ObjectType::Core)
                .filter_map(|core| core.cpuset().map(|s| s.iter_set().map(usize::from).collect::<Vec<_>>()))
                .filter(|pus| !pus.is_empty())
                .collect::<Vec<_>>();
            nodes.push(Node { os_index: os_index as u32, cores });
        }
        nodes.sort_by_key(|n| n.os_index);
        if nodes.iter().all(|n| n.cores.is_empty()) {
            return fallback("hwloc reported no NUMA node with cores".into());
        }
        Machine { nodes, fallback: None }
    })
}

/// The cores of the chosen NUMA nodes, interleaved node by node so consecutive threads spread evenly.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub cores: Vec<Vec<usize>>,
}

/// Validates `memoryDomains` (the argument named `argument`) and returns the interleaved core order.
pub(crate) fn plan(argument: &str, memory_domains: Option<&[u32]>) -> Result<Plan> {
    let machine = machine();
    let known = || machine.nodes.iter().map(|n| n.os_index.to_string()).collect::<Vec<_>>().join(", ");
    let chosen: Vec<&Node> = match memory_domains {
        None => machine.nodes.iter().collect(),
        Some([]) => {
            return Err(Error::invalid_argument(
                argument,
                format!("must name at least one NUMA node, got an empty list; known: {}", known()),
            ))
        }
        Some(ids) => {
            let mut chosen = Vec::with_capacity(ids.len());
            for (i, id) in ids.iter().enumerate() {
                if ids[..i].contains(id) {
                    return Err(Error::invalid_argument(argument, format!("names NUMA node {id} twice")));
                }
                match machine.nodes.iter().find(|n| n.os_index == *id) {
                    Some(node) => chosen.push(node),
                    None => {
                        return Err(Error::invalid_argument(
                            argument,
                            format!("names NUMA node {id}, which this machine does not have; known: {}", known()),
                        ))
                    }
                }
            }
            chosen
        }
    };
    let mut cores = Vec::new();
    let deepest = chosen.iter().map(|n| n.cores.len()).max().unwrap_or(0);
    for i in 0..deepest {
        for node in &chosen {
            if let Some(core) = node.cores.get(i) {
                cores.push(core.clone());
            }
        }
    }
    if cores.is_empty() {
        return Err(Error::invalid_argument(argument, "names only NUMA nodes without cores"));
    }
    Ok(Plan { cores })
}

impl Plan {
    /// The plan of an executor whose only thread is the caller: nothing to place.
    pub fn caller_only() -> Plan {
        Plan { cores: vec![Vec::new()] }
    }
    /// 7/8 of the cores, rounded to the nearest (half up), at least one: rounding down would leave one of a
    /// 2-core machine's cores idle and halve the default speed.
    pub fn default_threads(&self) -> usize {
        ((self.cores.len() * 7 + 4) / 8).max(1)
    }
    /// The core of thread `index` (0 is the calling thread, which is never pinned).
    pub fn core_of(&self, index: usize) -> &[usize] {
        &self.cores[index % self.cores.len()]
    }
}

/// Binds the calling thread to the processing units `pus` through hwloc.
pub(crate) fn pin_current_thread(pus: &[usize]) -> std::result::Result<(), String> {
    let topology = hwloc().ok_or_else(|| "hwloc could not load the topology".to_string())?;
    let set: CpuSet = pus.iter().map(|&p| hwlocality::bitmap::BitmapIndex::try_from(p).unwrap()).collect();
    topology.bind_cpu(&set, CpuBindingFlags::THREAD).map_err(|e| e.to_string())
}

/// The CPUs the OS lets the calling thread run on, read with `sched_getaffinity`.
pub fn current_affinity() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is valid, and the size passed is its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}
