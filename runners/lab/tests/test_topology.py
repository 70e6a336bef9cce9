"""The requested topology (qemu.py), the transfer port and the lockup watchdog (qemurun.py),
CPU lists and the guest's sysfs dump (sysfs.py)."""
import pytest

from wblab import REPO, LabError
from wblab.cpulist import format_cpu_list, parse_cpu_list
from wblab.qemu import PRESETS, add_memory_backends, bootable_presets, expected_topology, \
    parse_smp
from wblab.qemurun import lockup, scan_transfer
from wblab.sysfs import check_sysfs, parse_sysfs


def test_cpu_lists_round_trip():
    assert parse_cpu_list("0-2,5,7-8") == {0, 1, 2, 5, 7, 8}
    assert format_cpu_list({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8"
    assert format_cpu_list(set()) == ""


def test_parse_smp_fills_in_and_rejects():
    assert parse_smp("4,sockets=1,cores=2,threads=2") == {
        "cpus": 4, "sockets": 1, "dies": 1, "modules": 1, "cores": 2, "threads": 2}
    with pytest.raises(LabError, match="sockets\\*dies\\*modules\\*cores\\*threads = 8"):
        parse_smp("6,sockets=2,cores=2,threads=2")
    with pytest.raises(LabError, match="does not model books"):
        parse_smp("4,books=2,cores=2")
    # modules are x86's (qemu 9.0's level between dies and cores), not arm64's
    assert parse_smp("8,sockets=1,modules=2,cores=4")["modules"] == 2
    with pytest.raises(LabError, match="does not model modules on arm64"):
        parse_smp("8,sockets=1,modules=2,cores=4", "arm64")
    with pytest.raises(LabError, match="give sockets= and cores="):
        parse_smp("4")


def test_numa_preset_puts_each_socket_on_its_node():
    p = PRESETS["smt2-2socket-numa"]
    t = expected_topology(p["smp"], p["numa"])
    assert t["nodes"] == {0: {0, 1, 2, 3}, 1: {4, 5, 6, 7}}
    assert t["cpus"][5]["siblings"] == {4, 5}
    assert t["cpus"][5]["l3"] == {4, 5, 6, 7}


def test_2llc_preset_has_one_l3_per_die():
    t = expected_topology(PRESETS["2llc"]["smp"], [])
    assert t["cpus"][0]["l3"] == {0, 1} and t["cpus"][3]["l3"] == {2, 3}
    assert t["cpus"][3]["siblings"] == {3}


def test_smt2_3core_preset_has_three_sibling_pairs_in_one_llc():
    t = expected_topology(PRESETS["smt2-3core"]["smp"], PRESETS["smt2-3core"]["numa"])
    assert [sorted(t["cpus"][c]["siblings"]) for c in (0, 2, 4)] == [[0, 1], [2, 3], [4, 5]]
    assert all(info["l3"] == set(range(6)) for info in t["cpus"].values())
    assert t["nodes"] == {0: set(range(6))}


def test_every_preset_has_its_suite():
    for preset in bootable_presets():
        assert (REPO / f"configs/lab/{preset}.json").is_file(), preset


def test_memory_backends_split_evenly():
    objs, numa = add_memory_backends(["node,nodeid=0", "node,nodeid=1", "cpu,node-id=0"], 512)
    assert objs == ["memory-backend-ram,id=wblabmem0,size=256M",
                    "memory-backend-ram,id=wblabmem1,size=256M"]
    assert numa[0] == "node,nodeid=0,memdev=wblabmem0" and numa[2] == "cpu,node-id=0"
    with pytest.raises(LabError):
        add_memory_backends(["node", "node", "node"], 512)


SMT2_SYSFS = """cpu 0 thread_siblings_list 0-1
cpu 1 thread_siblings_list 0-1
cpu 2 thread_siblings_list 2-3
cpu 3 thread_siblings_list 2-3
cache 0 index3 3 Unified 0-3
cache 1 index3 3 Unified 0-3
cache 2 index3 3 Unified 0-3
cache 3 index3 3 Unified 0-3
node 0 0-3
domain 0 0 SMT 00000003
domain 0 1 MC 0000000f
kernel 6.12.117
"""


def test_sysfs_dump_matches_smt2():
    s = parse_sysfs(SMT2_SYSFS)
    assert [d["name"] for d in s["domains"][0]] == ["SMT", "MC"]
    assert s["domains"][0][1]["span"] == {0, 1, 2, 3}
    assert s["meta"]["kernel"] == "6.12.117"
    assert check_sysfs(expected_topology(PRESETS["smt2"]["smp"], []), s) == []


def test_sysfs_mismatch_is_named():
    s = parse_sysfs(SMT2_SYSFS.replace("cpu 3 thread_siblings_list 2-3", "cpu 3 thread_siblings_list 3"))
    assert check_sysfs(expected_topology(PRESETS["smt2"]["smp"], []), s) == [
        "cpu3 thread_siblings_list: expected 2-3, guest 3"]


def test_transfer_verifies_size_and_checksum(tmp_path):
    import base64
    import gzip
    import hashlib
    data = b"hello lab\n"
    good = (f"WBLAB-HELLO 6.12\nWBLAB-BEGIN a.txt {len(data)} {hashlib.sha256(data).hexdigest()}\n"
            f"{base64.b64encode(data).decode()}\nWBLAB-END a.txt\nWBLAB-EXIT run 3\n")
    bad = f"WBLAB-BEGIN b.txt 99 {'0' * 64}\n{base64.b64encode(data).decode()}\nWBLAB-END b.txt\n"
    cut = f"WBLAB-BEGIN c.txt 5 {'0' * 64}\nAAAA\n"
    big = data * 1000  # gzipped by the guest: size and sum are the file's own
    packed = base64.b64encode(gzip.compress(big)).decode()
    zipped = (f"WBLAB-BEGIN d.txt {len(big)} {hashlib.sha256(big).hexdigest()} gzip\n{packed}\n"
              f"WBLAB-END d.txt\n")
    notgz = (f"WBLAB-BEGIN e.txt {len(data)} {hashlib.sha256(data).hexdigest()} gzip\n"
             f"{base64.b64encode(data).decode()}\nWBLAB-END e.txt\n")
    p = tmp_path / "xfer"
    p.write_text(good + bad + zipped + notgz + cut + "WBLAB-DONE\n")
    got = scan_transfer(p)
    assert got["files"] == {"a.txt": data, "d.txt": big}
    assert any("e.txt: transfer corrupted" in e for e in got["errors"])
    assert got["exits"] == {"run": 3} and got["hello"]
    assert any("b.txt: transfer corrupted" in e for e in got["errors"])
    assert any("c.txt: transfer interrupted" in e for e in got["errors"])


def test_lockup_only_past_the_limit(tmp_path):
    c = tmp_path / "console"
    c.write_text("watchdog: BUG: soft lockup - CPU#1 stuck for 23s! [wakebench:77]\n")
    assert lockup(c) is None
    c.write_text("watchdog: BUG: soft lockup - CPU#1 stuck for 130s! [wakebench:77]\n")
    assert "CPU#1 stuck for 130 s in wakebench:77" in lockup(c)


def test_a_missing_dtc_is_one_line(monkeypatch):
    from wblab import devicetree
    monkeypatch.setattr(devicetree.shutil, "which", lambda name: None)
    with pytest.raises(LabError, match="^dtc not found: apt-get install device-tree-compiler"):
        devicetree.dtc(["-I", "dtb"], b"")
