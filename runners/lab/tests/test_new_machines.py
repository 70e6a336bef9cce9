"""The presets of the patches' own machines (issue 37): POWER10's SMT8 big core of two SMT4 halves
on pseries, x86's L2 clusters through qemu 10's modules; the domain statements they carry and the
departures check (a guest that cannot build the machine's domains must build exactly the stated
departure). Nothing here boots."""
import pytest

from wblab.domains import expected_domains, judge_domains
from wblab.guest import GuestPlan, qemu_command
from wblab.qemu import PRESETS, expected_topology
from wblab.qemubin import Qemu

QEMU10 = Qemu("/cache/qemu/usr/bin/qemu-system-ppc64", (10, 0, 2), "QEMU emulator version 10.0.2",
              ("/cache/qemu/usr/share/qemu",))


def topo(name):
    p = PRESETS[name]
    return expected_topology(p["smp"], p["numa"], p.get("arch", "x86_64"), p.get("caches"))


def test_power10_big_cores_have_interleaved_smt4_halves():
    t = topo("power10-smt8")
    assert t["cpus"][0]["siblings"] == set(range(8))
    assert t["cpus"][0]["small_core"] == {0, 2, 4, 6}
    assert t["cpus"][9]["small_core"] == {9, 11, 13, 15}
    levels = expected_domains(t, PRESETS["power10-smt8"]["domains"])
    assert levels[9] == [("SMT", {9, 11, 13, 15}), ("CACHE", set(range(8, 16))),
                         ("MC", set(range(16)))]


def test_pseries_command_takes_the_cached_qemu_its_firmware_and_two_vtys(tmp_path):
    p = PRESETS["power10-smt8"]
    plan = GuestPlan("power10-smt8", p["smp"], [], "power10", "vmlinux", "mainline", {}, "wb",
                     None, tmp_path, arch="ppc64le")
    cmd = qemu_command(plan, QEMU10, "initrd", "console.log", "xfer.log")
    assert cmd[:5] == [QEMU10.path, "-L", "/cache/qemu/usr/share/qemu", "-M", "pseries"]
    assert "console=hvc0" in cmd[cmd.index("-append") + 1]
    assert cmd.count("-serial") == 2 and cmd[-1] == "file:xfer.log"


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
                           "guest SMT=0-7 PKG=0-15 (no ibm,thread-groups)")


@pytest.mark.parametrize("departure", [None, DEPARTURE])
def test_a_guest_that_builds_neither_fails(departure):
    t = topo("power10-smt8")
    got = expected_domains(t, [("SMT", "core"), ("MC", "all")])  # neither statement
    failures, departed = judge_domains(t, STATEMENT, departure, got)
    assert departed == [] and len(failures) == (32 if departure else 16)
    assert all("guest SMT=" in f for f in failures)
