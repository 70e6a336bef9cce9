#!/usr/bin/env bash
# The two giants of issue 55 as hwloc XML, shaped as the real machines are
# (tests/fixtures/README.md#giants gives the basis of every choice):
#   runners/giant-topologies.sh DIR
# writes DIR/zen5-turin-2s-384pu-nps4.xml (2x 96-core Zen 5, 24 L3 of 8 cores, NPS4, core 101
# offline) and DIR/granite-rapids-2s-512pu-snc3.xml (2x 128-core Granite Rapids, SNC3 nodes of
# 43/43/42 cores under one L3 per package). Both come from an hwloc synthetic description
# (Debian 12's hwloc 2.9), cut to the CPUs Linux has and given the firmware's NUMA distances.
set -euo pipefail
dir=${1:?usage: runners/giant-topologies.sh DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=runners/install-packages.sh
. "$here/runners/install-packages.sh"
install_packages giant-topologies hwloc
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The OS index of each synthetic PU, in hwloc's order (package, node, core slot, thread), as
# Linux numbers x86 CPUs: every package's first threads, then every second thread (the sibling
# of CPU c is c + total/2). Slots past a node's core count are cores the part does not have;
# they get indexes from 1000 on, which the cut below drops.
#   pu_indexes PACKAGES SLOTS_PER_NODE CORES_OF_NODE_0 CORES_OF_NODE_1...
pu_indexes() {
  local packages=$1 slots=$2
  shift 2
  local counts=("$@") per_package=0 n p s cpu spare=1000 list=()
  for n in "${counts[@]}"; do per_package=$((per_package + n)); done
  local half=$((packages * per_package))
  for ((p = 0; p < packages; p++)); do
    cpu=$((p * per_package))
    for n in "${counts[@]}"; do
      for ((s = 0; s < slots; s++)); do
        if ((s < n)); then
          list+=("$cpu" "$((cpu + half))") && cpu=$((cpu + 1))
        else
          list+=("$spare" "$((spare + 1))") && spare=$((spare + 2))
        fi
      done
    done
  done
  local IFS=,
  echo "${list[*]}"
}

# The SLIT as Linux shows it: LOCAL on the diagonal, NEAR between nodes of one package, FAR
# across packages, in hwloc-annotate's distances format (kind 5: from the OS, a latency).
#   slit NODES NODES_PER_PACKAGE LOCAL NEAR FAR
slit() {
  local nodes=$1 per=$2 i j
  printf 'name=NUMALatency\n5\n%d\n' "$nodes"
  for ((i = 0; i < nodes; i++)); do echo "numa:$i"; done
  for ((i = 0; i < nodes; i++)); do
    for ((j = 0; j < nodes; j++)); do
      if ((i == j)); then echo "$3"; elif ((i / per == j / per)); then echo "$4"; else echo "$5"; fi
    done
  done
}

# giant OUT DESCRIPTION PRESENT_CPUS OFFLINE_CPUS SLIT_ARGS...: the synthetic machine cut to
# PRESENT_CPUS (absent ones are gone, as fused-off cores are), OFFLINE_CPUS taken out as hwloc
# shows offline CPUs (no PU, still in the Machine's complete_cpuset), the SLIT added.
giant() {
  local out=$1 desc=$2 present=$3 offline=$4
  shift 4
  lstopo-no-graphics --input "$desc" --of xml -f "$tmp/full.xml"
  local keep online off=() cpu
  for cpu in ${offline//,/ }; do off+=("~pu:$cpu"); done
  keep=$(hwloc-calc --if xml --input "$tmp/full.xml" --pi "pu:$present")
  online=$(hwloc-calc --if xml --input "$tmp/full.xml" --pi "pu:$present" "${off[@]}")
  lstopo-no-graphics --if xml --input "$tmp/full.xml" --restrict "$online" --of xml -f "$tmp/cut.xml"
  sed -i "0,/complete_cpuset=\"[^\"]*\"/s//complete_cpuset=\"$keep\"/" "$tmp/cut.xml"
  slit "$@" >"$tmp/slit"
  hwloc-annotate "$tmp/cut.xml" "$tmp/slit.xml" Machine:0 distances "$tmp/slit"
  hwloc-annotate "$tmp/slit.xml" "$out" Machine:0 info WakebenchGiant \
    "runners/giant-topologies.sh: hwloc synthetic, cut to CPUs $present${offline:+, $offline offline}"
}

caches() { echo "l2:$1(size=$2) l1d:1(size=48KiB) l1i:1(size=$3) core:1"; }

# Zen 5 Turin (EPYC 9655 class): per package 12 CCDs of 8 cores, each CCD one 32 MB L3, NPS4
# (3 CCDs a node), SLIT 10/12/32; core 101 (CPUs 101 and 293) offline.
giant "$dir/zen5-turin-2s-384pu-nps4.xml" \
  "pack:2 numa:4(memory=192GiB) l3:3(size=32MiB) $(caches 8 1MiB 32KiB) \
pu:2(indexes=$(pu_indexes 2 24 24 24 24 24))" 0-383 101,293 8 4 10 12 32

# Granite Rapids (Xeon 6980P class): per package 3 compute dies of 44 core slots with 43, 43 and
# 42 cores, SNC3 (a node per die) under the package's one 504 MB L3, SLIT 10/12/21.
giant "$dir/granite-rapids-2s-512pu-snc3.xml" \
  "pack:2 l3:1(size=504MiB) numa:3(memory=256GiB) $(caches 44 2MiB 64KiB) \
pu:2(indexes=$(pu_indexes 2 44 43 43 42))" 0-511 "" 6 3 10 12 21
