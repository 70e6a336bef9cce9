"""Issue 51, item 2: the lab's domains check (guest.check_guest_sysfs, as wakebench-lab runs it)
held to committed captures of the POWER presets' guests, booted through the gated ppc64le
kernel with the device-tree shim (patches/shim/powervm-lpar.patch) and with it turned off
(--no-shim): shimmed, each guest passes (power10-smallcore with its stated departure, the
coregroup the shim cannot supply); unshimmed, each fails. And the shim's device tree as the
guest's /proc/device-tree showed it. The captures: tests/fixtures/power-shim/README.md."""
import re
from pathlib import Path

import pytest

from wblab.guest import GuestPlan, check_guest_sysfs
from wblab.qemu import PRESETS, shim_cmdline
from wblab.sysfs import parse_sysfs
from wblab.topology import topology_args

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "power-shim"


def lab_check(preset, capture, shim):
    """(sysfs_check summary, problems) of the lab's check of `capture` (a guest's sysfs.txt) for
    `preset` booted with or without its shim."""
    plan = GuestPlan(kernel="vmlinux", policy="gated", lab_kernel={}, wakebench="wb",
                     config=None, out="o", **topology_args(preset, shim=shim))
    got = {"files": {"sysfs.txt": (FIXTURES / capture).read_bytes()}}
    summary, problems = {}, []
    check_guest_sysfs(plan, got, summary, problems)
    return summary["sysfs_check"], problems


def cpu0(capture):
    sysfs = parse_sysfs((FIXTURES / capture).read_text())
    return [(d["name"], d["span"]) for d in sorted(sysfs["domains"][0], key=lambda d: d["level"])]


def span(text):
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out |= set(range(int(a), int(b or a) + 1))
    return out


def test_power9_bigcore_shimmed_passes_the_check_at_every_level():
    check, problems = lab_check("power9-bigcore", "power9-bigcore.sysfs.txt", shim=True)
    assert check["ok"] and not problems and not check["departures"]
    assert cpu0("power9-bigcore.sysfs.txt") == [("SMT", span("0,2,4,6")), ("CACHE", span("0-7")),
                                                ("PKG", span("0-15")), ("NUMA", span("0-31"))]


def test_power10_smallcore_shimmed_passes_with_its_stated_departure():
    check, problems = lab_check("power10-smallcore", "power10-smallcore.sysfs.txt", shim=True)
    assert check["ok"] and not problems
    assert len(check["departures"]) == 16  # MC 0-15 stated, PKG 0-15 built, on every CPU
    assert check["departure_cause"] == PRESETS["power10-smallcore"]["departures"]["cause"]
    assert cpu0("power10-smallcore.sysfs.txt") == [("SMT", span("0,2,4,6")),
                                                   ("PKG", span("0-15"))]


def captured(preset, *more):
    """pytest.param skipped, with the reason, where the unshimmed guest was not captured."""
    missing = not (FIXTURES / f"{preset}-noshim.sysfs.txt").is_file()
    return pytest.param(preset, *more, marks=pytest.mark.skipif(
        missing, reason=f"{preset}'s unshimmed boot is not captured (fixtures README)"))


UNSHIMMED = [captured("power9-bigcore", 32), captured("power10-smallcore", 16)]


@pytest.mark.parametrize("preset, cpus", UNSHIMMED)
def test_unshimmed_guests_fail_the_check(preset, cpus):
    check, problems = lab_check(preset, f"{preset}-noshim.sysfs.txt", shim=False)
    assert not check["ok"] and problems
    bad = {m.split()[0] for m in check["mismatches"] if "sched domains" in m}
    assert len(bad) == cpus  # every CPU: SMT over the whole SMT8 core, no CACHE / MC
    assert not check["departures"]  # nor the stated departure (power10-smallcore's)
    assert cpu0(f"{preset}-noshim.sysfs.txt")[0] == ("SMT", span("0-7"))


@pytest.mark.parametrize("preset", [captured("power9-bigcore"), captured("power10-smallcore")])
def test_the_captures_were_booted_with_and_without_the_presets_command_line(preset):
    line = shim_cmdline(PRESETS[preset]["shim"])
    on = parse_sysfs((FIXTURES / f"{preset}.sysfs.txt").read_text())["meta"]
    off = parse_sysfs((FIXTURES / f"{preset}-noshim.sysfs.txt").read_text())["meta"]
    assert line in on["cmdline"].split() and "wblab_shim" not in off["cmdline"]
    assert on["kernel"] == off["kernel"]  # one kernel, shimmed and unshimmed


def cells(capture, prop):
    """{node: [u32, ...]} of `prop` in the guest's /proc/device-tree dump (od -tx1 bytes)."""
    out, key = {}, None
    for line in (FIXTURES / capture).read_text().splitlines():
        m = re.fullmatch(r"(\S+)/(\S+):", line)
        if m:
            key = m.group(1) if m.group(2) == prop else None
            out.setdefault(key, []) if key else None
        elif key and re.fullmatch(r"[ 0-9a-f]+", line):
            out[key] += line.split()
        else:
            key = None
    return {k: [int("".join(b[i:i + 4]), 16) for i in range(0, len(b), 4)]
            for k, b in out.items()}


def test_the_shims_device_tree_as_the_power9_guest_showed_it():
    tg = cells("power9-bigcore-devicetree.txt", "ibm,thread-groups")
    assert sorted(tg) == ["PowerPC,POWER9@0", "PowerPC,POWER9@10", "PowerPC,POWER9@18",
                          "PowerPC,POWER9@8"]
    for node, value in tg.items():
        s = int(node.split("@")[1], 16)
        assert value == [1, 2, 4] + [s + t for t in (0, 2, 4, 6, 1, 3, 5, 7)], node
    l2 = cells("power9-bigcore-devicetree.txt", "l2-cache")
    phandle = cells("power9-bigcore-devicetree.txt", "phandle")
    for node in tg:  # each big core its own l2-cache node, which names its own l3-cache node
        cache = next(n for n, v in phandle.items() if v == l2[node])
        assert cache == "l2-cache@" + node.split("@")[1]
        assert l2[cache] == phandle["l3-cache@" + node.split("@")[1]]
    size = cells("power9-bigcore-devicetree.txt", "d-cache-size")
    assert size["l2-cache@0"] == [512 * 1024] and size["l3-cache@0"] == [10240 * 1024]


def flags(capture):
    """{level: [flag, ...]} of cpu0 as the guest's debugfs showed them."""
    text = (FIXTURES / capture).read_text()
    lines = text[text.index("cpu0 flags:\n"):].splitlines()[1:]
    return {n: f.split() for n, f in (line.split(":", 1) for line in lines)}


def test_cpu0s_flags_are_a_dedicated_lpars():
    """DOMAINS.md section 3, POWER9 dedicated: S, C, B, N, no SD_ASYM_PACKING anywhere
    (shared_processor off); POWER10: the LLC (SD_SHARE_LLC) is SMT alone."""
    p9 = flags("power9-bigcore-devicetree.txt")
    assert list(p9) == ["SMT", "CACHE", "PKG", "NUMA"]
    assert "SD_SHARE_LLC" in p9["CACHE"] and "SD_SHARE_CPUCAPACITY" not in p9["CACHE"]
    p10 = flags("power10-smallcore-devicetree.txt")
    assert list(p10) == ["SMT", "PKG"] and "SD_SHARE_LLC" not in p10["PKG"]
    for f in (p9, p10):
        assert not any("SD_ASYM_PACKING" in v for v in f.values())


def test_the_shims_device_tree_as_the_power10_guest_showed_it():
    tg = cells("power10-smallcore-devicetree.txt", "ibm,thread-groups")
    groups = [0, 2, 4, 6, 1, 3, 5, 7]
    assert tg["PowerPC,POWER10@8"] == [1, 2, 4] + [8 + t for t in groups] + \
        [2, 2, 4] + [8 + t for t in groups]
    assert "/l2-cache:" not in (FIXTURES / "power10-smallcore-devicetree.txt").read_text()
