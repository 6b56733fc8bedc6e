#!/usr/bin/env bash
# The device check, run from a prebuilt kit on a machine with NVIDIA GPUs, without cargo.
#
# `cargo xtask gpu-kit` builds the kit where the sources are (list_devices, gpu_check, vram_check and
# model_vram_check, release builds) into target/gpu-kit/; the kit travels with the working tree to the GPU
# machine, where this script runs every step under its own timeout and prints one line per step:
#   PASS|FAIL|SKIP <step>: <what>
# Steps: discovery (uform-core's device list against nvidia-smi: count, names, total memory with nvidia-smi's
# reserved part accounted for, classes), then gpu_check's context, streams, roundtrip, drain, borrowed, fork,
# multicast, cycles, visible (core/examples/gpu_check.rs says what each checks), then vram_check and
# model_vram_check. Without a driver or a GPU every step says SKIP. The whole stays under 7 minutes: each step's
# timeout is cut to what is left of UFORM_CHECK_BUDGET (400 s).
#
# Exit status: 0 when nothing failed and something passed, 1 when a step failed, 2 when every step skipped.
#
# Usage: scripts/gpu-check.sh [KIT]      KIT defaults to $UFORM_GPU_KIT, else target/gpu-kit of this checkout
#        UFORM_MEMORY_TOLERANCE_MIB=N    allowed memory difference per device after the reserved part (256)
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
kit="${1:-${UFORM_GPU_KIT:-$root/target/gpu-kit}}"
budget="${UFORM_CHECK_BUDGET:-400}"
tolerance_mib="${UFORM_MEMORY_TOLERANCE_MIB:-256}"
passed=0 failed=0 skipped=0

say() {
    echo "$*"
    case "$1" in
    PASS) passed=$((passed + 1)) ;;
    FAIL) failed=$((failed + 1)) ;;
    *) skipped=$((skipped + 1)) ;;
    esac
}

# The timeout for a step that wants $1 seconds: no more than what is left of the budget.
limit() {
    local left=$((budget - SECONDS))
    echo $(($1 < left ? $1 : left))
}

# CUDA numbers devices fastest-first by default; nvidia-smi by PCI bus. Make CUDA do the same so the two lists
# line up ordinal by ordinal.
export CUDA_DEVICE_ORDER=PCI_BUS_ID

discovery() {
    if [[ ! -x "$kit/list_devices" ]]; then
        say FAIL discovery: "$kit/list_devices is missing: run \`cargo xtask gpu-kit\` where the sources are"
        return
    fi
    if ! command -v nvidia-smi >/dev/null 2>&1; then
        say SKIP discovery: "no nvidia-smi on this machine (no NVIDIA driver)"
        return
    fi
    local listing smi reserved_known=1 t
    t="$(limit 30)"
    listing="$(timeout -k 5 "$t" "$kit/list_devices")" || {
        say FAIL discovery: "list_devices failed or ran past ${t}s"
        return
    }
    local select=()
    [[ -n "${CUDA_VISIBLE_DEVICES:-}" ]] && select=(--id="$CUDA_VISIBLE_DEVICES")
    # memory.reserved (driver 510+) is what nvidia-smi counts in memory.total but the driver keeps for itself:
    # ~450-550 MiB on H100/H200 boards, so cuDeviceTotalMem is memory.total minus it.
    if ! smi="$(timeout -k 5 "$t" nvidia-smi "${select[@]}" --query-gpu=name,memory.total,memory.reserved \
        --format=csv,noheader,nounits 2>/dev/null)"; then
        reserved_known=0
        smi="$(timeout -k 5 "$t" nvidia-smi "${select[@]}" --query-gpu=name,memory.total --format=csv,noheader,nounits)" || {
            say FAIL discovery: "nvidia-smi --query-gpu failed"
            return
        }
    fi
    local gpus rows problems=() available
    mapfile -t gpus < <(awk -F'\t' '$1 == "gpu" && $2 == "Nvidia"' <<<"$listing")
    mapfile -t rows < <(sed '/^[[:space:]]*$/d' <<<"$smi")
    available="$(awk -F'\t' '$1 == "available" { print $2 }' <<<"$listing")"
    ((${#gpus[@]} == ${#rows[@]})) || problems+=("uform-core lists ${#gpus[@]} NVIDIA devices, nvidia-smi ${#rows[@]}")
    local i count=$((${#gpus[@]} < ${#rows[@]} ? ${#gpus[@]} : ${#rows[@]})) detail=()
    for ((i = 0; i < count; i++)); do
        local ordinal class units bytes name smi_name total reserved ours expected difference
        IFS=$'\t' read -r _ _ ordinal class units bytes _ name <<<"${gpus[$i]}"
        IFS=',' read -r smi_name total reserved <<<"${rows[$i]}"
        smi_name="$(sed -E 's/^[[:space:]]+|[[:space:]]+$//g' <<<"$smi_name")"
        total="${total//[^0-9]/}"
        reserved="${reserved//[^0-9]/}"
        ((reserved_known)) && [[ -n "$reserved" ]] || reserved=0
        ours=$((bytes / 1048576))
        expected=$((total - reserved))
        difference=$((ours > expected ? ours - expected : expected - ours))
        # Without memory.reserved, allow the largest reserved part seen on current boards.
        local allowed=$((reserved_known ? tolerance_mib : tolerance_mib + 1024))
        detail+=("$i:${ours}MiB/smi ${total}-${reserved}MiB")
        [[ "$ordinal" == "$i" ]] || problems+=("device $i has vendor ordinal $ordinal")
        [[ "$name" == "$smi_name" ]] || problems+=("device $i is '$name', nvidia-smi says '$smi_name'")
        ((difference <= allowed)) || problems+=("device $i: ${ours} MiB, nvidia-smi ${total} MiB total - ${reserved} reserved")
        ((units > 0)) || problems+=("device $i reports $units multiprocessors")
        if [[ "$class" == "-" ]]; then
            problems+=("device $i ('$name') has no GPU class")
        elif [[ ",$available," != *",$class,"* ]]; then
            problems+=("device $i's class $class is missing from capabilities_available '$available'")
        fi
    done
    if ((${#problems[@]} > 0)); then
        say FAIL discovery: "$(IFS=';'; echo "${problems[*]}")"
    elif ((${#gpus[@]} == 0)); then
        say SKIP discovery: "nvidia-smi and uform-core both list no NVIDIA GPU"
    else
        say PASS discovery: "${#gpus[@]} device(s) match nvidia-smi (${detail[*]})"
    fi
}

# Runs "$kit/gpu_check $1", which prints its own PASS/FAIL/SKIP line, within $2 seconds.
check() {
    local step="$1" t out rc
    t="$(limit "$2")"
    if ((t <= 0)); then
        say FAIL "$step": "not run: the ${budget}s budget is spent"
        return
    fi
    if [[ ! -x "$kit/gpu_check" ]]; then
        say FAIL "$step": "$kit/gpu_check is missing: run \`cargo xtask gpu-kit\` where the sources are"
        return
    fi
    out="$(timeout -k 5 "$t" "$kit/gpu_check" "$step" 2>&1)"
    rc=$?
    local line
    line="$(grep -E '^(PASS|FAIL|SKIP) ' <<<"$out" | tail -1)"
    if ((rc == 124 || rc == 137)); then
        say FAIL "$step": "ran past its ${t}s timeout"
    elif [[ -z "$line" ]]; then
        say FAIL "$step": "exited $rc without a verdict: $(tail -c 300 <<<"$out" | tr '\n' ' ')"
    else
        [[ "$line" == FAIL* ]] && echo "$out" | grep -vE '^(PASS|FAIL|SKIP) ' | sed 's/^/    /'
        say "${line%% *}" "${line#* }"
    fi
}

# Runs one of the older whole-program checks (exit 0 ok, 2 no GPU, else failure) within $2 seconds.
example() {
    local name="$1" t out rc
    t="$(limit "$2")"
    if [[ ! -x "$kit/$name" ]]; then
        say FAIL "$name": "$kit/$name is missing"
        return
    fi
    ((t > 0)) || { say FAIL "$name": "not run: the ${budget}s budget is spent"; return; }
    out="$(timeout -k 5 "$t" "$kit/$name" 2>&1)"
    rc=$?
    case $rc in
    0) say PASS "$name": "$(tail -1 <<<"$out")" ;;
    2) say SKIP "$name": "$(tail -1 <<<"$out")" ;;
    124 | 137) say FAIL "$name": "ran past its ${t}s timeout" ;;
    *) say FAIL "$name": "exit $rc: $(tail -c 300 <<<"$out" | tr '\n' ' ')" ;;
    esac
}

echo "gpu-check: kit $kit, budget ${budget}s"
discovery
check context 30
check streams 30
check roundtrip 30
check drain 60
check borrowed 30
check fork 30
check multicast 30
check cycles 90
check visible 60
example vram_check 30
example model_vram_check 30
echo "gpu-check: $passed PASS, $failed FAIL, $skipped SKIP in ${SECONDS}s"
if ((failed > 0)); then
    exit 1
elif ((passed == 0)); then
    exit 2
fi
