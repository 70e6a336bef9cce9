"""The presets of the patches' own machines (issue 37): POWER10's SMT8 big core of two SMT4 halves
on pseries, x86's L2 clusters through qemu 10's modules; the domain statements they carry and the
departures check (a guest that cannot build the machine's domains must build exactly the stated
departure). Nothing here boots."""
import json

import pytest

from wblab import REPO, LabError

from wblab.devicetree import reorder_cpus
from wblab.domains import expected_domains, judge_domains
from wblab.guest import GuestPlan, cache_groups, device_tree_order, qemu_command
from wblab.qemu import PRESETS, expected_topology
from wblab.qemubin import Qemu
from wblab.renumber import renumber_config, twin_mapping
from wblab.twins import rows

QEMU10 = Qemu("/cache/qemu/usr/bin/qemu-system-ppc64", (10, 0, 2), "QEMU emulator version 10.0.2",
              ("/cache/qemu/usr/share/qemu",))


def topo(name):
    p = PRESETS[name]
    return expected_topology(p["smp"], p["numa"], p.get("arch", "x86_64"), p.get("caches"),
                             p.get("numbering", "contiguous"))


def test_power10_big_cores_have_interleaved_smt4_halves():
    t = topo("power10-smt8")
    assert t["cpus"][0]["siblings"] == set(range(8))
    assert t["cpus"][0]["small_core"] == {0, 2, 4, 6}
    assert t["cpus"][9]["small_core"] == {9, 11, 13, 15}
    levels = expected_domains(t, PRESETS["power10-smt8"]["domains"])
    assert levels[9] == [("SMT", {9, 11, 13, 15}), ("MC", set(range(16)))]


def test_pseries_command_takes_the_cached_qemu_its_firmware_a_vty_and_a_pci_virtconsole(tmp_path):
    p = PRESETS["power10-smt8"]
    plan = GuestPlan("power10-smt8", p["smp"], [], "power10", "vmlinux", "mainline", {}, "wb",
                     None, tmp_path, arch="ppc64le")
    cmd = qemu_command(plan, QEMU10, "initrd", "console.log", "xfer.log")
    assert cmd[:5] == [QEMU10.path, "-L", "/cache/qemu/usr/share/qemu", "-M", "pseries"]
    assert "console=hvc0" in cmd[cmd.index("-append") + 1]
    # The results' port is a virtio console on PCI (hvc1), not a second vty (100 B/s on POWER10).
    assert cmd.count("-serial") == 1 and "file,id=wblabxfer,path=xfer.log" in cmd
    assert cmd[cmd.index("virtio-serial-pci") - 1] == "-device"


def test_x86_modules_are_l2_clusters_inside_the_socket():
    t = topo("x86-cls4")
    assert [t["cpus"][c]["module"] for c in range(8)] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert t["cpus"][5]["cluster"] == {4, 5, 6, 7} and t["cpus"][5]["siblings"] == {5}
    assert t["cpus"][5]["caches"] == {2: {4, 5, 6, 7}, 3: set(range(8))}
    assert expected_domains(t, PRESETS["x86-cls4"]["domains"])[5] == [
        ("CLS", {4, 5, 6, 7}), ("MC", set(range(8)))]


def test_the_cluster_preset_machine_puts_the_l2_at_the_module(tmp_path):
    p = PRESETS["x86-cls4"]
    plan = GuestPlan("x86-cls4", p["smp"], [], p["cpu"], "bzImage", "mainline", {}, "wb", None,
                     tmp_path, caches=p["caches"], machine=p["machine"])
    cmd = qemu_command(plan, QEMU10, "initrd", "console.log", "xfer.log")
    assert cmd[cmd.index("-M") + 1] == "pc,smp-cache.0.cache=l2,smp-cache.0.topology=module"


# Departures: a guest judged against the machine's statement and a stated departure.
STATEMENT = [("SMT", "small-core"), ("CACHE", "core"), ("MC", "all")]
DEPARTURE = {"domains": [("SMT", "core"), ("PKG", "all")], "cause": "no ibm,thread-groups"}


def test_a_guest_that_builds_the_machine_passes_with_no_departure():
    t = topo("power10-smt8")
    got = expected_domains(t, STATEMENT)
    assert judge_domains(t, STATEMENT, DEPARTURE, got) == ([], [])


def test_a_guest_that_builds_the_stated_departure_lists_it_with_its_cause():
    t = topo("power10-smt8")
    got = expected_domains(t, DEPARTURE["domains"])
    failures, departed = judge_domains(t, STATEMENT, DEPARTURE, got)
    assert failures == [] and len(departed) == 16
    assert departed[0] == ("cpu0 sched domains: the machine's SMT=0,2,4,6 CACHE=0-7 MC=0-15, "
                           "guest SMT=0-7 PKG=0-15")


@pytest.mark.parametrize("departure", [None, DEPARTURE])
def test_a_guest_that_builds_neither_fails(departure):
    t = topo("power10-smt8")
    got = expected_domains(t, [("SMT", "core"), ("MC", "all")])  # neither statement
    failures, departed = judge_domains(t, STATEMENT, departure, got)
    assert departed == [] and len(failures) == (32 if departure else 16)
    assert all("guest SMT=" in f for f in failures)


# Strided SMT numbering: the twin of arm64-smt2-cls whose siblings are N and N + 4.
def test_the_strided_twin_numbers_every_first_thread_before_any_second():
    t = topo("arm64-smt2-cls-strided")
    assert device_tree_order(t) == [0, 2, 4, 6, 1, 3, 5, 7]
    assert t["cpus"][1]["siblings"] == {1, 5} and t["cpus"][1]["index"] == 2
    assert t["cpus"][1]["cluster"] == {0, 1, 4, 5}
    assert expected_domains(t, PRESETS["arm64-smt2-cls-strided"]["domains"])[5] == [
        ("SMT", {1, 5}), ("CLS", {0, 1, 4, 5}), ("MC", set(range(8)))]
    # the device tree's cache nodes name qemu's cpu nodes, not the guest's numbers
    assert cache_groups(t)[2] == cache_groups(topo("arm64-smt2-cls"))[2] == [
        [0, 1], [2, 3], [4, 5], [6, 7]]


def test_the_twins_are_one_machine_renumbered():
    a, b = topo("arm64-smt2-cls"), topo("arm64-smt2-cls-strided")
    rename = {n: b_n for b_n, info in b["cpus"].items() for n in [info["index"]]}
    for n, info in a["cpus"].items():
        assert {rename[c] for c in info["siblings"]} == b["cpus"][rename[n]]["siblings"]
        assert {rename[c] for c in info["cluster"]} == b["cpus"][rename[n]]["cluster"]


def cpu_node(c):
    return f"\t\tcpu@{c:x} {{\n\t\t\tphandle = <{0x8008 - c:#x}>;\n\t\t\treg = <{c:#x}>;\n\t\t}};\n"


def test_reorder_moves_only_the_cpu_nodes():
    dts = ("/ {\n\tcpus {\n\t\tcpu-map {\n\t\t};\n\n"
           + "".join(cpu_node(c) for c in range(4)) + "\t};\n};\n")
    out = reorder_cpus(dts, [0, 2, 1, 3])
    assert out.index("cpu-map") < out.index("cpu@0") < out.index("cpu@2") < out.index("cpu@1")
    assert sorted(out.splitlines()) == sorted(dts.splitlines())
    with pytest.raises(LabError, match="are not the CPUs"):
        reorder_cpus(dts, [0, 1, 2])


def test_strided_numbering_is_refused_where_the_lab_cannot_order_the_cpus():
    with pytest.raises(LabError, match="arm64 guests only"):
        expected_topology("4,sockets=1,cores=2,threads=2", [], "x86_64", None, "strided")


def test_the_strided_twins_searched_cases_are_the_contiguous_ones_renumbered():
    src = json.loads((REPO / "configs/lab/search/arm64-smt2-cls.json").read_text())
    got = json.loads((REPO / "configs/lab/search/arm64-smt2-cls-strided.json").read_text())
    mapping = twin_mapping("arm64-smt2-cls", "arm64-smt2-cls-strided")
    assert mapping == {0: 0, 1: 4, 2: 1, 3: 5, 4: 2, 5: 6, 6: 3, 7: 7}
    assert got["cases"] == renumber_config(src, mapping, "")["cases"]
    assert "search" not in got  # the source's record speaks of the source's CPU ids


def test_renumber_maps_pairs_in_order_lists_as_sets_and_leaves_knob_words():
    mapping = {0: 0, 1: 4, 2: 1, 3: 5, 4: 2, 5: 6, 6: 3, 7: 7}
    doc = {"cases": [{"params": {"start": ["1,4"], "background": ["2-3", "other-llc"]}}]}
    out = renumber_config(doc, mapping, "mapped")
    assert out["cases"][0]["params"] == {"start": ["4,2"], "background": ["1,5", "other-llc"]}
    with pytest.raises(LabError, match="not one machine renumbered"):
        twin_mapping("smt2", "arm64-smt2-cls")


def test_icount_reaches_qemu_and_only_under_tcg(tmp_path):
    p = PRESETS["arm64-cls4"]
    plan = GuestPlan("arm64-cls4", p["smp"], [], "neoverse-n1", "Image", "mainline", {}, "wb",
                     None, tmp_path, arch="arm64", caches=p["caches"], icount=0)
    cmd = qemu_command(plan, QEMU10, "initrd", "console.log", "xfer.log")
    assert cmd[cmd.index("-icount") + 1] == "shift=0"
    from wblab.cli import main
    assert main(["--preset", "arm64-cls4", "--accel", "kvm", "--icount", "0"]) == 2


def test_twins_pairs_each_case_with_its_renumbered_twin(tmp_path):
    def cell(preset, policy, cases):
        d = tmp_path / preset / "gated" / policy
        d.mkdir(parents=True)
        (d / "agreement.json").write_text(json.dumps({"cases": [
            {"start": list(s), "model": {"classes": {m: 1.0}, "cpus": cpus},
             "observed": {"classes": obs}} for s, m, cpus, obs in cases]}))
    cell("arm64-smt2-cls", "sync-core", [((0, 7), "smt-sibling", [0, 1], {"smt-sibling": 0.85,
                                                                        "cluster": 0.15})])
    cell("arm64-smt2-cls-strided", "sync-core", [((0, 7), "cluster", [0, 1], {"cluster": 1.0})])
    got = rows(str(tmp_path), "arm64-smt2-cls", "arm64-smt2-cls-strided", ["sync-core"])
    assert got == [("sync-core", (0, 7), (0, 7), "smt-sibling 0,1", "smt-sibling 85% cluster 15%",
                    "cluster 0,1", "cluster 100%")]
    cell("arm64-smt2-cls", "mainline", [((0, 1), "smt-sibling", [0, 1], {"smt-sibling": 1.0})])
    cell("arm64-smt2-cls-strided", "mainline", [((0, 1), "cluster", [0, 1], {"cluster": 1.0})])
    with pytest.raises(LabError, match="no case starting on \\(0, 4\\)"):
        rows(str(tmp_path), "arm64-smt2-cls", "arm64-smt2-cls-strided", ["mainline"])


def test_pseries_ram_is_rounded_up_to_256_mib_blocks(tmp_path):
    p = PRESETS["power10-smt8"]
    plan = GuestPlan("power10-smt8", p["smp"], [], "power10", "vmlinux", "mainline", {}, "wb",
                     None, tmp_path, arch="ppc64le", mem=1152)
    cmd = qemu_command(plan, QEMU10, "initrd", "console.log", "xfer.log")
    assert cmd[cmd.index("-m") + 1] == "1280M"


def test_pseries_ram_of_each_numa_node_is_rounded_up_to_256_mib_blocks(tmp_path):
    p = PRESETS["power9-smt8-2numa"]
    plan = GuestPlan("power9-smt8-2numa", p["smp"], p["numa"], "power9", "vmlinux", "mainline",
                     {}, "wb", None, tmp_path, arch="ppc64le", mem=1152)
    cmd = qemu_command(plan, QEMU10, "initrd", "console.log", "xfer.log")
    assert cmd[cmd.index("-m") + 1] == "1536M"
    sizes = [o.rsplit("size=", 1)[1] for o in cmd if o.startswith("memory-backend-ram")]
    assert sizes == ["768M", "768M"]
