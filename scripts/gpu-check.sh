#!/usr/bin/env bash
# Checks uform-core's GPU discovery against nvidia-smi on a machine with NVIDIA GPUs.
# Then runs the VRAM executor check and loads a model to VRAM and reads it back (the examples vram_check and
# model_vram_check).
#
# Builds core/examples/list_devices.rs, then compares, device by device, the count, the names and the total
# memory with `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits`. It also requires every
# listed device to have a class, that class to appear in capabilities_available, and the capability strings to
# be well formed. Exits 0 when everything matches, 1 on a mismatch, 2 when it cannot run (no nvidia-smi).
#
# Usage: scripts/gpu-check.sh            (from anywhere inside the repository)
#        UFORM_MEMORY_TOLERANCE_MIB=N    allowed memory difference per device (default 256 MiB; see below)
#        UFORM_LIST_DEVICES=PATH         a list_devices binary built elsewhere (skips the cargo build)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpu-check: nvidia-smi not found; this check needs a machine with an NVIDIA driver" >&2
    exit 2
fi

# CUDA numbers devices fastest-first by default; nvidia-smi numbers them by PCI bus. Make CUDA do the same so
# the two lists line up ordinal by ordinal. CUDA_VISIBLE_DEVICES (indices or UUIDs) is passed on to nvidia-smi.
export CUDA_DEVICE_ORDER=PCI_BUS_ID
smi_select=()
if [[ -n "${CUDA_VISIBLE_DEVICES:-}" ]]; then
    smi_select=(--id="$CUDA_VISIBLE_DEVICES")
fi

# cuDeviceTotalMem and nvidia-smi's memory.total agree to the MiB on most boards, but some platforms (GH200,
# confidential computing, some vGPU profiles) keep a reserved region out of one of them.
tolerance_mib="${UFORM_MEMORY_TOLERANCE_MIB:-256}"

list_devices="${UFORM_LIST_DEVICES:-}"
if [[ -z "$list_devices" ]]; then
    cargo build --quiet --release -p uform-core --example list_devices
    list_devices=./target/release/examples/list_devices
fi
listing="$("$list_devices")"
expected="$(nvidia-smi "${smi_select[@]}" --query-gpu=name,memory.total --format=csv,noheader,nounits)"

echo "== uform-core list_devices"
echo "$listing"
echo "== nvidia-smi"
echo "$expected"
echo "=="

failures=0
fail() {
    echo "MISMATCH: $*" >&2
    failures=$((failures + 1))
}

field() { awk -F'\t' -v key="$1" '$1 == key { print $2 }' <<<"$listing"; }
compiled="$(field compiled)"
available="$(field available)"
for list_name in compiled available; do
    list="${!list_name}"
    if [[ -z "$list" || "$list" == *" "* || "$list" == ,* || "$list" == *, || "$list" == *,,* ]]; then
        fail "capabilities_$list_name is malformed: '$list'"
    fi
done

mapfile -t gpus < <(awk -F'\t' '$1 == "gpu" && $2 == "Nvidia"' <<<"$listing")
mapfile -t smi < <(sed '/^[[:space:]]*$/d' <<<"$expected")

if [[ ${#gpus[@]} -ne ${#smi[@]} ]]; then
    fail "uform-core lists ${#gpus[@]} NVIDIA devices, nvidia-smi lists ${#smi[@]}"
fi

count=$((${#gpus[@]} < ${#smi[@]} ? ${#gpus[@]} : ${#smi[@]}))
for ((i = 0; i < count; i++)); do
    IFS=$'\t' read -r _ _ ordinal class units bytes multicast name <<<"${gpus[$i]}"
    smi_name="$(sed -E 's/^[[:space:]]+|[[:space:]]*,[^,]*$//g' <<<"${smi[$i]}")"
    smi_mib="$(awk -F',' '{ gsub(/[^0-9]/, "", $NF); print $NF }' <<<"${smi[$i]}")"
    ours_mib=$((bytes / 1048576))
    echo "device $i: ordinal=$ordinal name='$name' class=$class units=$units memory=${ours_mib}MiB multicast=$multicast" \
        "| nvidia-smi: name='$smi_name' memory=${smi_mib}MiB"

    [[ "$ordinal" == "$i" ]] || fail "device $i has vendor ordinal $ordinal"
    [[ "$name" == "$smi_name" ]] || fail "device $i is named '$name', nvidia-smi says '$smi_name'"
    if [[ -z "$smi_mib" ]]; then
        fail "device $i: nvidia-smi gave no memory size in '${smi[$i]}'"
    else
        difference=$((ours_mib > smi_mib ? ours_mib - smi_mib : smi_mib - ours_mib))
        ((difference <= tolerance_mib)) ||
            fail "device $i has ${ours_mib} MiB, nvidia-smi says ${smi_mib} MiB (tolerance ${tolerance_mib} MiB)"
    fi
    ((units > 0)) || fail "device $i reports $units streaming multiprocessors"
    if [[ "$class" == "-" ]]; then
        fail "device $i ('$name') has no GPU class: add its compute capability to core/src/devices/classes.rs"
    elif [[ ",$available," != *",$class,"* ]]; then
        fail "device $i's class $class is missing from capabilities_available '$available'"
    fi
done

if ((failures > 0)); then
    echo "gpu-check: $failures mismatch(es)" >&2
    exit 1
fi
echo "gpu-check: OK, ${#gpus[@]} NVIDIA device(s) match nvidia-smi"

# The VRAM executor on every device: its own streams, all devices at once, borrowed streams, then free.
if [[ -z "${UFORM_LIST_DEVICES:-}" ]]; then
    cargo run --quiet --release -p uform-core --example vram_check || { echo "gpu-check: the VRAM executor check failed" >&2; exit 1; }
fi

# A model loaded to VRAM on every NVIDIA device and read back byte for byte (core/examples/model_vram_check.rs).
if [[ -z "${UFORM_LIST_DEVICES:-}" ]]; then
    cargo run --quiet --release -p uform-core --example model_vram_check || { echo "gpu-check: the VRAM model check failed" >&2; exit 1; }
fi
