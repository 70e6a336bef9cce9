"""arm64 guests' device tree. qemu 7.2's virt machine describes threads, clusters and sockets
(/cpus/cpu-map) and NUMA nodes (numa-node-id) but no cache beyond what CLIDR_EL1 says of each CPU,
so Linux knows no shared cache: arch_topology's cpu_coregroup_mask() then spans the package and
cacheinfo shares nothing. The lab dumps qemu's own DTB (-machine dumpdtb=), appends cache nodes
as the preset states (cache_overlay), and boots with -dtb: the guest kernel builds its domains
from caches as on a real machine's device tree (Documentation/devicetree/bindings/cache.yaml)."""
import re
import shutil
import subprocess

from . import LabError

# Sizes only make the caches look real to hwloc and sysfs; the scheduler reads the sharing alone.
CACHE_SIZE = {2: 1 << 20, 3: 32 << 20}


def cache_overlay(groups, memory_nodes):
    """DTS text appended to qemu's: for each level of `groups` ({2: [[cpus], ...], 3: [...]}) one
    cache node per group, each CPU's node pointing at its L2 and each L2 at its CPUs' L3; and
    qemu's memory nodes deleted (its loader adds them again when it loads a -dtb, and refuses to
    add one that exists)."""
    parent = {}  # (level, cpu) -> label of that CPU's cache of that level
    lines = ["/ {"]
    lines += [f"\t/delete-node/ {name};" for name in memory_nodes]
    lines.append("\tcpus {")
    for level in sorted(groups):
        for k, cpus in enumerate(groups[level]):
            for c in cpus:
                parent[(level, c)] = f"wblab_l{level}_{k}"
    cpus = sorted({c for (_, c) in parent})
    for c in cpus:
        first = min(level for (level, x) in parent if x == c)
        lines.append(f"\t\tcpu@{c} {{ next-level-cache = <&{parent[(first, c)]}>; }};")
    for level in sorted(groups):
        for k, members in enumerate(groups[level]):
            nxt = parent.get((level + 1, members[0]))
            props = ['compatible = "cache";', "cache-unified;", f"cache-level = <{level}>;",
                     f"cache-size = <{CACHE_SIZE.get(level, 1 << 20)}>;",
                     "cache-line-size = <64>;"]
            if nxt:
                props.append(f"next-level-cache = <&{nxt}>;")
            lines.append(f"\t\twblab_l{level}_{k}: l{level}-cache-{k} {{ {' '.join(props)} }};")
    lines += ["\t};", "};"]
    return "\n".join(lines) + "\n"


def memory_nodes(dts):
    """The names of the root's memory nodes in a decompiled DTS."""
    return re.findall(r"^\t(memory@[0-9a-f]+) \{", dts, re.M)


def dtc(args, data):
    if not shutil.which("dtc"):
        raise LabError("dtc not found: apt-get install device-tree-compiler (arm64 guests' "
                       "device tree)")
    proc = subprocess.run(["dtc", "-q", *args], input=data, capture_output=True)
    if proc.returncode:
        raise LabError(f"dtc {' '.join(args)}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


# A cpu node of qemu's decompiled tree: properties only, no child node.
CPU_NODE = re.compile(r"^\t\tcpu@([0-9a-f]+) \{\n.*?^\t\t\};\n", re.M | re.S)


def reorder_cpus(dts, order):
    """`dts` with its cpu nodes in `order` (qemu CPU indexes; Linux numbers arm64 CPUs in that
    order, the boot CPU, index 0, first); the other nodes stay where they were."""
    nodes = {int(m.group(1), 16): m.group(0) for m in CPU_NODE.finditer(dts)}
    if sorted(nodes) != sorted(order):
        raise LabError(f"device tree cpu nodes {sorted(nodes)} are not the CPUs {sorted(order)}")
    first = CPU_NODE.search(dts).start()
    rest = CPU_NODE.sub("", dts)
    return rest[:first] + "".join(nodes[i] for i in order) + rest[first:]


def guest_dtb(dump_cmd, dumped, groups, out, order=None):
    """Runs `dump_cmd` (qemu with -machine ...,dumpdtb=`dumped`), puts the cpu nodes in `order`
    (default: qemu's), appends cache_overlay(groups) to what qemu wrote and compiles it to
    `out`."""
    proc = subprocess.run(dump_cmd, capture_output=True, text=True, timeout=60)
    if proc.returncode or not dumped.is_file():
        raise LabError(f"qemu dumpdtb exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    dts = dtc(["-I", "dtb", "-O", "dts"], dumped.read_bytes()).decode()
    if order:
        dts = reorder_cpus(dts, order)
    dts += cache_overlay(groups, memory_nodes(dts))
    out.write_bytes(dtc(["-I", "dts", "-O", "dtb"], dts.encode()))
    dumped.unlink()
    return out
