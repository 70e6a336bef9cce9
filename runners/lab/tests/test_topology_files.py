"""configs/lab/topologies/<preset>.xml (the hwloc XML each preset's guest showed wakebench, or for a
preset waiting for its shim the one wblab.lpar writes) against the topology the preset's qemu
arguments ask for (qemu.expected_topology)."""
import shutil
import xml.etree.ElementTree as ET

import pytest

from wblab import REPO
from wblab.lpar import lpar_files, lpar_xml
from wblab.qemu import PRESETS, bootable_presets, expected_topology

TOPOLOGIES = REPO / "configs/lab/topologies"
# The presets whose file wblab.lpar writes (HostName ...-stated): the LPARs as sourced, until a
# shimmed guest's hwloc XML replaces them (issue 51, item 3).
STATED = ["power10-smallcore", "power9-bigcore"]


def cpuset(text):
    """hwloc's cpuset attribute ("0x0000000f", or comma-separated 32-bit groups, most significant
    first) -> set of PU indexes."""
    mask = int("".join(g.removeprefix("0x") for g in text.split(",")), 16)
    return {b for b in range(mask.bit_length()) if mask >> b & 1}


def xml_topology(path):
    """{pu: {"siblings", "l1", "l3", "node"}} from the XML: the cpusets of the Core, L1Cache and
    L3Cache objects each PU lies under, and the NUMANode whose cpuset holds it."""
    root = ET.parse(path).getroot()
    pus = {}
    kinds = {"Core": "siblings", "L1Cache": "l1", "L3Cache": "l3"}

    def walk(obj, above):
        kind = obj.get("type")
        if kind in kinds:
            above = above | {kinds[kind]: cpuset(obj.get("cpuset"))}
        if kind == "PU":
            pus[int(obj.get("os_index"))] = above
        for child in obj.findall("object"):
            walk(child, above)

    for machine in root.findall("object"):
        walk(machine, {"siblings": None, "l1": None, "l3": None})
    nodes = {int(n.get("os_index")): cpuset(n.get("cpuset"))
             for n in root.iter("object") if n.get("type") == "NUMANode"}
    for pu, info in pus.items():
        info["node"] = next((n for n, cs in nodes.items() if pu in cs), None)
    return pus, nodes


def test_every_preset_has_its_topology_file():
    """Every preset: a guest's capture, or for a STATED one its LPAR as wblab.lpar writes it
    (HostName ...-stated)."""
    assert sorted(p.stem for p in TOPOLOGIES.glob("*.xml")) == sorted(PRESETS)
    for p in PRESETS:
        host = (TOPOLOGIES / f"{p}.xml").read_text().count(f'"wakebench-lab-{p}-stated"')
        assert host == (1 if p in STATED else 0), p


@pytest.mark.parametrize("preset", sorted(set(bootable_presets()) - set(STATED)))
def test_topology_file_matches_the_qemu_arguments(preset):
    p = PRESETS[preset]
    want = expected_topology(p["smp"], p["numa"], p.get("arch", "x86_64"), p.get("caches"),
                             p.get("numbering", "contiguous"))
    pus, nodes = xml_topology(TOPOLOGIES / f"{preset}.xml")
    assert sorted(pus) == sorted(want["cpus"])
    for pu, info in pus.items():
        exp = want["cpus"][pu]
        assert (info["siblings"], info["l3"], info["node"]) == \
            (exp["siblings"], exp["l3"], exp["node"]), f"{preset} PU {pu}"
    assert nodes == want["nodes"]


def test_cpuset_reads_hwloc_groups():
    assert cpuset("0x0000000f") == {0, 1, 2, 3}
    assert cpuset("0x00000001,0x00000000") == {32}


@pytest.mark.parametrize("preset", STATED)
def test_a_stated_lpar_file_has_the_big_core_as_core_and_the_small_core_as_l1(preset):
    """hwloc's Core is thread_siblings, the SMT8 big core; the interleaved small core (the kernel's
    SMT siblings) is the L1's; POWER9's L3 spans the big core, POWER10's the small core."""
    p = PRESETS[preset]
    want = expected_topology(p["smp"], p["numa"], p["arch"])
    pus, nodes = xml_topology(TOPOLOGIES / f"{preset}.xml")
    assert sorted(pus) == sorted(want["cpus"]) and nodes == want["nodes"]
    l3 = "small_core" if 2 in p["shim"]["thread_groups"] else "siblings"
    for pu, info in pus.items():
        exp = want["cpus"][pu]
        assert (info["siblings"], info["l1"], info["l3"], info["node"]) == \
            (exp["siblings"], exp["small_core"], exp[l3], exp["node"]), f"{preset} PU {pu}"
    assert pus[0]["l1"] == {0, 2, 4, 6}


@pytest.mark.skipif(shutil.which("lstopo-no-graphics") is None,
                    reason="hwloc's lstopo-no-graphics not installed (runners/bootstrap.sh)")
@pytest.mark.parametrize("preset", STATED)
def test_a_stated_lpar_file_is_what_wblab_lpar_writes(preset):
    assert lpar_xml(preset) == (TOPOLOGIES / f"{preset}.xml").read_text()


def test_the_lpar_sysfs_shows_the_big_core_as_siblings_and_the_small_core_as_l1():
    for preset, l2 in (("power9-bigcore", "0-7"), ("power10-smallcore", "1,3,5,7")):
        f = lpar_files(preset)
        cpu = "sys/devices/system/cpu/cpu1/"
        assert f[cpu + "topology/thread_siblings_list"] == "0-7"
        assert f[cpu + "cache/index0/shared_cpu_list"] == "1,3,5,7"
        assert f[cpu + "cache/index0/shared_cpu_map"] == "000000aa"
        assert f[cpu + "cache/index2/shared_cpu_list"] == l2
