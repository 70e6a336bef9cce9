"""The /sys and /proc files hwloc reads on a PowerVM LPAR under Linux 6.12, for the presets that
state an LPAR's domains before any guest can build them (qemu.PRESETS with a "shim":
power9-bigcore, power10-smallcore), and the hwloc XML hwloc 2.9 writes from them: the preset's
configs/lab/topologies/<preset>.xml until a shimmed guest is captured. Sources:
runners/lab/power/DOMAINS.md.
- topology/thread_siblings and core_cpus: cpu_sibling_map, every thread of the SMT8 big core
  (arch/powerpc/kernel/smp.c add_cpu_to_masks(), asm/topology.h topology_sibling_cpumask()), so
  hwloc's Core is the big core; package_cpus and physical_package_id: the chip (ibm,chip-id, qemu's
  socket).
- cache/index0-1 (L1d, L1i): the small core (arch/powerpc/kernel/cacheinfo.c get_shared_cpu_map(),
  cpu_smallcore_mask() with big cores); index2-3 (L2, L3): the small core where ibm,thread-groups
  property 2 names it (thread_group_shares_l2 and _l3: POWER10), else the CPUs whose cpu node
  names the cache node: the big core (an l2-cache node per big core: POWER9). Both have PowerVM's
  l2-cache and l3-cache nodes, which a POWER10 shim may leave out (DOMAINS.md section 6): its
  guest then shows the L1s only, and the LLC is the SMT level either way.
- node/nodeN: the preset's NUMA nodes, distances 10 and 20 as qemu's pseries guests show them.
Sizes: POWER9's from an LPAR's lscpu (util-linux issue 698), POWER10's from an LPAR's lstopo
(linuxppc-dev, 53fd537b-5549-427f-ad7d-28d58daaa5bd@linux.ibm.com); the model reads none.
Run from runners/lab: python3 -m wblab.lpar PRESET OUT.xml"""
import os
import subprocess
import sys
import tempfile

from . import LabError
from .cpulist import format_cpu_list
from .qemu import PRESETS, expected_topology

# cpu model -> (cpuinfo's cpu and revision lines, as the lab's pseries guests of that -cpu
# print them; caches as (level, sysfs type, KiB)).
CPUS = {
    "power9": ("POWER9 (architected), altivec supported", "2.2 (pvr 004e 1202)",
               [(1, "Data", 32), (1, "Instruction", 32), (2, "Unified", 512),
                (3, "Unified", 10240)]),
    "power10": ("POWER10 (architected), altivec supported", "2.0 (pvr 0080 1200)",
                [(1, "Data", 32), (1, "Instruction", 48), (2, "Unified", 1024),
                 (3, "Unified", 4096)]),
}
NODE_MIB = 256


def cpumask(cpus, nr_cpus):
    """The kernel's %*pb form of a mask nr_cpus wide: 32-bit groups, most significant first."""
    value = sum(1 << c for c in cpus)
    groups = [f"{value >> s & 0xffffffff:08x}" for s in range(0, nr_cpus, 32)]
    return ",".join(reversed(groups))


def mask_files(path, cpus, nr_cpus, suffix=""):
    """`path + suffix` as a mask and `path + "_list"` as a list (thread_siblings,
    shared_cpu + _map)."""
    return {path + suffix: cpumask(cpus, nr_cpus), path + "_list": format_cpu_list(cpus)}


def cpu_files(c, info, cpus, cache_scopes, caches):
    d = f"sys/devices/system/cpu/cpu{c}/"
    chip = {j for j, o in cpus.items() if o["socket"] == info["socket"]}
    files = {d + "online": "1", d + "topology/physical_package_id": str(info["socket"]),
             d + "topology/core_id": str(min(info["siblings"]))}
    for name, span in (("thread_siblings", info["siblings"]), ("core_cpus", info["siblings"]),
                       ("core_siblings", chip), ("package_cpus", chip)):
        files.update(mask_files(d + "topology/" + name, span, len(cpus)))
    for i, (level, kind, kib) in enumerate(caches):
        e = f"{d}cache/index{i}/"
        span = info["small_core"] if cache_scopes[level] == "small-core" else info["siblings"]
        files.update({e + "level": str(level), e + "type": kind, e + "size": f"{kib}K",
                      e + "coherency_line_size": "128"})
        files.update(mask_files(e + "shared_cpu", span, len(cpus), "_map"))
    return files


def node_files(nodes, nr_cpus):
    files = {}
    for n, span in nodes.items():
        d = f"sys/devices/system/node/node{n}/"
        files.update({d + "cpumap": cpumask(span, nr_cpus), d + "cpulist": format_cpu_list(span),
                      d + "distance": " ".join("10" if m == n else "20" for m in nodes),
                      d + "meminfo": f"Node {n} MemTotal:       {NODE_MIB * 1024} kB"})
    online = format_cpu_list(nodes)
    return files | {"sys/devices/system/node/online": online,
                    "sys/devices/system/node/possible": online}


def proc_files(preset, n, model, revision):
    per_cpu = "".join(f"processor\t: {c}\ncpu\t\t: {model}\nclock\t\t: 1000.000000MHz\n"
                      f"revision\t: {revision}\n\n" for c in range(n))
    machine = "IBM pSeries (emulated by qemu)"
    return {"proc/cpuinfo": per_cpu + f"timebase\t: 512000000\nplatform\t: pSeries\n"
                                      f"model\t\t: {machine}\nmachine\t\t: CHRP {machine}\n",
            "proc/hwloc-nofile-info": (
                f"OSName: Linux\nOSRelease: 6.12.118-gated\nOSVersion: no guest (wblab.lpar)\n"
                f"HostName: wakebench-lab-{preset}-stated\nArchitecture: ppc64le\n"
                f"FallbackNbProcessors: {n}\nPageSize: 4096")}


def lpar_files(preset):
    """{path under the root: content} of `preset`'s LPAR, from its qemu arguments and shim."""
    p = PRESETS[preset]
    if "shim" not in p:
        raise LabError(f"preset {preset} states no LPAR (no \"shim\"): its guest is captured")
    model, revision, caches = CPUS[p["cpu"]]
    shared = "small-core" if 2 in p["shim"]["thread_groups"] else "core"
    scopes = {1: "small-core", 2: shared, 3: shared}
    t = expected_topology(p["smp"], p["numa"], p["arch"])
    cpus, n = t["cpus"], len(t["cpus"])
    files = {}
    for c, info in cpus.items():
        files.update(cpu_files(c, info, cpus, scopes, caches))
    every = format_cpu_list(cpus)
    for name in ("online", "possible", "present"):
        files[f"sys/devices/system/cpu/{name}"] = every
    return files | node_files(t["nodes"], n) | proc_files(preset, n, model, revision)


def write_tree(files, root):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="ascii") as f:
            f.write(text + "\n")


def lpar_xml(preset):
    """The hwloc XML lstopo-no-graphics (hwloc 2.9, Debian's `hwloc`) writes from the files."""
    with tempfile.TemporaryDirectory() as root:
        write_tree(lpar_files(preset), root)
        env = dict(os.environ, HWLOC_THISSYSTEM="0")
        out = subprocess.run(["lstopo-no-graphics", "--input", root, "--no-io", "--of", "xml"],
                             env=env, capture_output=True, text=True, check=True)
    return out.stdout


def main(argv):
    if len(argv) != 2:
        print("usage: python3 -m wblab.lpar PRESET OUT.xml", file=sys.stderr)
        return 2
    with open(argv[1], "w", encoding="utf-8") as f:
        f.write(lpar_xml(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
