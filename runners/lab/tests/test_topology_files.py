"""configs/lab/topologies/<preset>.xml (the hwloc XML each preset's guest showed wakebench) against
the topology the preset's qemu arguments ask for (qemu.expected_topology)."""
import xml.etree.ElementTree as ET

import pytest

from wblab import REPO
from wblab.qemu import PRESETS, bootable_presets, expected_topology

TOPOLOGIES = REPO / "configs/lab/topologies"


def cpuset(text):
    """hwloc's cpuset attribute ("0x0000000f", or comma-separated 32-bit groups, most significant
    first) -> set of PU indexes."""
    mask = int("".join(g.removeprefix("0x") for g in text.split(",")), 16)
    return {b for b in range(mask.bit_length()) if mask >> b & 1}


def xml_topology(path):
    """{pu: {"siblings", "l3", "node"}} from the XML: the cpusets of the Core and L3Cache objects
    each PU lies under, and the NUMANode whose cpuset holds it."""
    root = ET.parse(path).getroot()
    pus = {}

    def walk(obj, core, l3):
        kind = obj.get("type")
        core = cpuset(obj.get("cpuset")) if kind == "Core" else core
        l3 = cpuset(obj.get("cpuset")) if kind == "L3Cache" else l3
        if kind == "PU":
            pus[int(obj.get("os_index"))] = {"siblings": core, "l3": l3}
        for child in obj.findall("object"):
            walk(child, core, l3)

    for machine in root.findall("object"):
        walk(machine, None, None)
    nodes = {int(n.get("os_index")): cpuset(n.get("cpuset"))
             for n in root.iter("object") if n.get("type") == "NUMANode"}
    for pu, info in pus.items():
        info["node"] = next((n for n, cs in nodes.items() if pu in cs), None)
    return pus, nodes


def test_every_preset_has_its_topology_file():
    """Every preset the lab boots; a preset waiting for its shim (qemu.missing_shim) has never
    booted, so no guest has shown wakebench its topology yet."""
    assert sorted(p.stem for p in TOPOLOGIES.glob("*.xml")) == sorted(bootable_presets())


@pytest.mark.parametrize("preset", sorted(bootable_presets()))
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
