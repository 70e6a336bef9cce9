"""arm64 guests: the topology the presets ask of qemu's virt machine, the device tree's cache
nodes, the sched domains each preset states, and the checks that hold the guest's domains against
the preset's and the predictor's (each shown failing on a dump that must contradict it)."""
import json
import re
import subprocess
from pathlib import Path

import pytest

import wblab.guest
from wblab import LabError
from wblab.devicetree import cache_overlay, memory_nodes
from wblab.domains import expected_domains, guest_levels, level_mismatches, model_mismatches
from wblab.guest import GuestPlan, cache_groups, dump_command, qemu_command
from wblab.initramfs import elf_arch
from wblab.qemu import PRESETS, expected_topology, parse_smp
from wblab.qemubin import Qemu
from wblab.sysfs import check_sysfs, parse_sysfs

from resultsets import document, predicted, typed

ARM64 = sorted(p for p, v in PRESETS.items() if v.get("arch") == "arm64")


def topo(preset):
    p = PRESETS[preset]
    return expected_topology(p["smp"], p["numa"], "arm64", p["caches"])


def test_clusters_are_arm64_only():
    assert parse_smp("8,sockets=1,clusters=2,cores=4,threads=1", "arm64")["dies"] == 2
    with pytest.raises(LabError, match="does not model clusters on x86_64"):
        parse_smp("8,sockets=1,clusters=2,cores=4,threads=1")
    with pytest.raises(LabError, match="does not model dies on arm64"):
        parse_smp("8,sockets=1,dies=2,cores=4", "arm64")


def test_virt_numbers_threads_innermost_then_cores_clusters_sockets():
    t = topo("arm64-smt2-cls")["cpus"]
    assert t[1]["siblings"] == {0, 1} and t[5]["cluster"] == {4, 5, 6, 7}
    assert t[2]["caches"] == {2: {2, 3}, 3: set(range(8))}
    n = topo("arm64-2numa")
    assert n["nodes"] == {0: {0, 1, 2, 3}, 1: {4, 5, 6, 7}}
    assert n["cpus"][6]["cluster"] == {6, 7} and n["cpus"][6]["l3"] == {4, 5, 6, 7}
    assert topo("arm64-altra")["cpus"][3]["l3"] is None


def test_cache_overlay_links_each_cpu_to_its_l2_and_each_l2_to_its_l3():
    groups = cache_groups(topo("arm64-cls4"))
    assert groups == {2: [[0, 1, 2, 3], [4, 5, 6, 7]], 3: [list(range(8))]}
    dts = cache_overlay(groups, ["memory@40000000"])
    assert "/delete-node/ memory@40000000;" in dts
    assert "cpu@5 { next-level-cache = <&wblab_l2_1>; };" in dts
    assert "wblab_l2_1: l2-cache-1 {" in dts and "next-level-cache = <&wblab_l3_0>" in dts
    assert "cache-level = <3>" in dts and dts.count("l3-cache-") == 1
    altra = cache_overlay(cache_groups(topo("arm64-altra")), [])
    assert altra.count("l2-cache-") == 8 and "l3-cache" not in altra
    assert memory_nodes("/ {\n\tmemory@50000000 {\n\t};\n\tmemory@40000000 {\n") == \
        ["memory@50000000", "memory@40000000"]


@pytest.mark.skipif(subprocess.run(["which", "dtc"], capture_output=True).returncode != 0,
                    reason="dtc not installed (apt-get install device-tree-compiler)")
def test_overlay_compiles_onto_a_virt_like_tree():
    base = ("/dts-v1/;\n/ {\n\t#address-cells = <2>;\n\t#size-cells = <2>;\n"
            "\tmemory@40000000 {\n\t\tdevice_type = \"memory\";\n\t\treg = <0 0x40000000 0 "
            "0x20000000>;\n\t};\n\tcpus {\n\t\t#address-cells = <1>;\n\t\t#size-cells = <0>;\n"
            + "".join(f"\t\tcpu@{c} {{\n\t\t\treg = <{c}>;\n\t\t}};\n" for c in range(8))
            + "\t};\n};\n")
    dts = base + cache_overlay(cache_groups(topo("arm64-cls4")), memory_nodes(base))
    out = subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dts"], input=dts.encode(),
                         capture_output=True, check=True).stdout.decode()
    assert "memory@" not in out and out.count("next-level-cache") == 8 + 2


def test_arm64_command_uses_virt_the_pl011_and_a_virtio_transfer_port(tmp_path):
    p = PRESETS["arm64-cls4"]
    plan = GuestPlan("arm64-cls4", p["smp"], [], "max", "Image", "mainline", {}, "wb", None,
                     tmp_path, arch="arm64", caches=p["caches"])
    qemu = Qemu("qemu-system-aarch64", (7, 2, 0), "QEMU emulator version 7.2.0")
    cmd = qemu_command(plan, qemu, "initrd", "console.log", "xfer.log", "guest.dtb")
    assert cmd[:3] == ["qemu-system-aarch64", "-M", "virt,gic-version=3"]
    assert "console=ttyAMA0" in cmd[cmd.index("-append") + 1]
    assert "virtconsole,chardev=wblabxfer" in cmd and cmd[-2:] == ["-dtb", "guest.dtb"]
    dump = dump_command(cmd[:-2], "q.dtb")
    assert dump[2] == "virt,gic-version=3,dumpdtb=q.dtb" and "-dtb" not in dump


def test_each_preset_states_its_domains():
    got = {p: [n for n, _ in PRESETS[p]["domains"]] for p in ARM64}
    assert got == {"arm64-2numa": ["CLS", "MC", "NUMA"], "arm64-altra": ["MC", "PKG"],
                   "arm64-cls4": ["CLS", "MC"], "arm64-smt2-cls": ["SMT", "CLS", "MC"],
                   "arm64-smt2-cls-strided": ["SMT", "CLS", "MC"]}
    e = expected_domains(topo("arm64-2numa"), PRESETS["arm64-2numa"]["domains"])
    assert e[5] == [("CLS", {4, 5}), ("MC", {4, 5, 6, 7}), ("NUMA", set(range(8)))]


def dump(levels_of):
    """A sysfs dump of 8 CPUs whose domains are levels_of(cpu) = [(name, span)]."""
    lines = []
    for c in range(8):
        for i, (name, span) in enumerate(levels_of(c)):
            lines.append(f"domain {c} {i} {name} {sum(1 << x for x in span):x}")
    return parse_sysfs("\n".join(lines))


ALTRA = lambda c: [("MC", {c & ~1, c | 1}), ("PKG", set(range(8)))]  # noqa: E731


def test_a_missing_or_wrong_level_fails_the_preset_check():
    want = expected_domains(topo("arm64-altra"), PRESETS["arm64-altra"]["domains"])
    assert level_mismatches(want, guest_levels(dump(ALTRA)), "the preset's") == []
    # The guest without its MC level (no cache nodes in the tree: the package is the LLC).
    bad = level_mismatches(want, guest_levels(dump(lambda c: ALTRA(c)[1:])), "the preset's")
    assert len(bad) == 8 and bad[0] == "cpu0 sched domains: the preset's MC=0-1 PKG=0-7, " \
                                       "guest PKG=0-7"
    # What the preset first stated (CLS kept, MC removed): the 6.12 guest built MC.
    cls = dump(lambda c: [("CLS", ALTRA(c)[0][1])] + ALTRA(c)[1:])
    assert len(level_mismatches(want, guest_levels(cls), "the preset's")) == 8


def predict_of(levels_of, llc_name):
    return predicted({"domains": [
        {"cpu": c, "domain": i, "name": n, "span": ",".join(map(str, sorted(s))),
         "share_llc": n == llc_name}
        for c in range(8) for i, (n, s) in enumerate(levels_of(c))]})


def results_of(levels_of, llc_name):
    return typed(environment={"sched_domains": [
        {"cpu": c, "domain": i, "name": n,
         "flags": ["SD_WAKE_AFFINE"] + (["SD_SHARE_LLC"] if n in ("CLS", llc_name) else [])}
        for c in range(8) for i, (n, _) in enumerate(levels_of(c))]})


def test_the_model_reading_must_equal_the_guest_domains():
    sysfs = dump(ALTRA)
    assert model_mismatches(sysfs, predict_of(ALTRA, "MC"), results_of(ALTRA, "MC")) == []
    # A model that read the package as the LLC.
    bad = model_mismatches(sysfs, predict_of(ALTRA, "PKG"), results_of(ALTRA, "MC"))
    assert bad[0] == ("cpu0 LLC level (highest SD_SHARE_LLC or SD_SHARE_PKG_RESOURCES): the "
                      "model's PKG, guest MC")
    # A recorded dump with a level removed.
    short = model_mismatches(dump(lambda c: ALTRA(c)[1:]), predict_of(ALTRA, "MC"),
                             results_of(ALTRA, "MC"))
    assert len(short) == 8 and "guest PKG=0-7" in short[0]
    assert model_mismatches(sysfs, predicted({}), typed()) == [
        "predict.json has no domains (a wakebench before the model printed them)"]


def test_sysfs_check_reads_clusters_and_every_cache_level():
    t = topo("arm64-cls4")
    lines = []
    for c in range(8):
        lo = c & ~3
        lines += [f"cpu {c} thread_siblings_list {c}", f"cpu {c} cluster_cpus_list {lo}-{lo + 3}",
                  f"cache {c} index2 2 Unified {lo}-{lo + 3}", f"cache {c} index3 3 Unified 0-7",
                  f"node 0 0-7"]
    assert check_sysfs(t, parse_sysfs("\n".join(lines))) == []
    flat = parse_sysfs("\n".join(l for l in lines if "index3" not in l).replace(
        "cluster_cpus_list 4-7", "cluster_cpus_list 0-7"))
    bad = check_sysfs(t, flat)
    assert "cpu0 L3 shared_cpu_list: expected 0-7, guest no L3" in bad
    assert "cpu4 cluster_cpus_list: expected 4-7, guest 0-7" in bad


def test_elf_arch(tmp_path):
    arm = tmp_path / "arm"
    arm.write_bytes(b"\x7fELF" + bytes(14) + (183).to_bytes(2, "little"))
    assert elf_arch(arm) == "arm64"
    (tmp_path / "txt").write_text("#!/bin/sh\n")
    assert elf_arch(tmp_path / "txt") is None


FIXTURES = Path(__file__).parent / "fixtures"


def recorded_check(monkeypatch, tmp_path, edit=lambda text: text, guest="arm64-altra",
                   edit_set=lambda doc: doc):
    """check_model_domains on a guest's recorded dump (edited), its result set's sched domains
    (edited) and the predictor's reading of that set, as the lab runs it."""
    recorded = FIXTURES / guest
    predict = json.loads((recorded / "predict-domains.json").read_text())
    monkeypatch.setattr(wblab.guest, "run_json", lambda cmd: (predict, None))
    results = tmp_path / "results.json"
    recorded_set = json.loads((recorded / "sched-domains.json").read_text())
    results.write_text(json.dumps(document(**edit_set(recorded_set))))
    sysfs = parse_sysfs(edit((recorded / "sysfs.txt").read_text()))
    summary, problems = {}, []
    wblab.guest.check_model_domains("wakebench", sysfs, results, summary, problems)
    return summary["model_domains_check"]["mismatches"], problems


def test_a_kernel_before_6_10_spells_the_llc_flag_sd_share_pkg_resources(monkeypatch, tmp_path):
    """Debian 12's stock 6.1 kernel in the smt2 guest (recorded 2026-12-02): its LLC level carries
    SD_SHARE_PKG_RESOURCES; without that flag on any level the check must fail."""
    assert recorded_check(monkeypatch, tmp_path, guest="x86-smt2-debian-6.1") == ([], [])

    def no_llc_flag(doc):
        for d in doc["environment"]["sched_domains"]:
            d["flags"] = [f for f in d["flags"] if f != "SD_SHARE_PKG_RESOURCES"]
        return doc
    mism, problems = recorded_check(monkeypatch, tmp_path, guest="x86-smt2-debian-6.1",
                                    edit_set=no_llc_flag)
    assert mism == ["cpu0 LLC level (highest SD_SHARE_LLC or SD_SHARE_PKG_RESOURCES): the "
                    "model's MC, guest none"]
    assert problems == ["the guest's sched domains differ from the model's (1)"]


def test_recorded_guest_domains_equal_the_model_and_a_removed_level_fails(monkeypatch, tmp_path):
    assert recorded_check(monkeypatch, tmp_path) == ([], [])
    # The same dump without its MC level (domain 0 of every CPU).
    mism, problems = recorded_check(
        monkeypatch, tmp_path,
        lambda t: "\n".join(l for l in t.splitlines() if not re.match(r"domain \d+ 0 ", l)))
    assert len(mism) == 8 and mism[0] == "cpu0 sched domains: the model's MC=0-1 PKG=0-7, " \
                                         "guest PKG=0-7"
    assert problems == ["the guest's sched domains differ from the model's (8)"]
