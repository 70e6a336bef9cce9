"""Issue 51: the presets of PowerVM LPARs as sourced in runners/lab/power/DOMAINS.md
(power9-bigcore, power10-smallcore): their stated domains per CPU, interleaved small cores
included, and the guard that keeps every guest from booting them before the device-tree shim
exists. Nothing here boots."""
import pytest

import wblab.cli
import wblab.matrix
from wblab import REPO, LabError
from wblab.cli import main
from wblab.domains import expected_domains
from wblab.qemu import POWERVM_SMT8_GROUPS, PRESETS, bootable_presets, check_bootable, \
    expected_topology, missing_shim

SHIM_PRESETS = ["power10-smallcore", "power9-bigcore"]
FIXTURE = REPO / ("tests/fixtures/captures/domains/"
                  "procsys-power9-lpar-128cpu-smt8-cpu0-name-flags-5.9rc.txt")


def stated(name):
    p = PRESETS[name]
    t = expected_topology(p["smp"], p["numa"], p["arch"], p.get("caches"))
    return expected_domains(t, p["domains"])


def cpus(text):
    """'0,2,4,6' or '8-15' -> a set."""
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out |= set(range(int(a), int(b or a) + 1))
    return out


def test_powervm_small_cores_are_interleaved():
    # ibm,thread-groups as captured (DOMAINS.md T1): [1 2 4 0 2 4 6 1 3 5 7 ...]
    assert POWERVM_SMT8_GROUPS == ((0, 2, 4, 6), (1, 3, 5, 7))


# Every CPU of each preset, spelled out: an SMT level over its interleaved small core.
POWER9_BIGCORE = {
    0: "SMT=0,2,4,6 CACHE=0-7 PKG=0-15 NUMA=0-31",
    1: "SMT=1,3,5,7 CACHE=0-7 PKG=0-15 NUMA=0-31",
    6: "SMT=0,2,4,6 CACHE=0-7 PKG=0-15 NUMA=0-31",
    9: "SMT=9,11,13,15 CACHE=8-15 PKG=0-15 NUMA=0-31",
    14: "SMT=8,10,12,14 CACHE=8-15 PKG=0-15 NUMA=0-31",
    16: "SMT=16,18,20,22 CACHE=16-23 PKG=16-31 NUMA=0-31",
    23: "SMT=17,19,21,23 CACHE=16-23 PKG=16-31 NUMA=0-31",
    25: "SMT=25,27,29,31 CACHE=24-31 PKG=16-31 NUMA=0-31",
    30: "SMT=24,26,28,30 CACHE=24-31 PKG=16-31 NUMA=0-31",
}
POWER10_SMALLCORE = {
    0: "SMT=0,2,4,6 MC=0-15",
    1: "SMT=1,3,5,7 MC=0-15",
    7: "SMT=1,3,5,7 MC=0-15",
    8: "SMT=8,10,12,14 MC=0-15",  # DOMAINS.md T2: cpu8's L2/L3 8,10,12,14
    9: "SMT=9,11,13,15 MC=0-15",  # and cpu9's 9,11,13,15
    12: "SMT=8,10,12,14 MC=0-15",
}


def levels(text):
    return [(n, cpus(s)) for n, s in (w.split("=") for w in text.split())]


@pytest.mark.parametrize("name, table", [("power9-bigcore", POWER9_BIGCORE),
                                         ("power10-smallcore", POWER10_SMALLCORE)])
def test_stated_domains_per_cpu(name, table):
    got = stated(name)
    for c, text in table.items():
        assert got[c] == levels(text), f"{name} cpu{c}"


@pytest.mark.parametrize("name", SHIM_PRESETS)
def test_every_cpu_has_its_small_core_below_its_core(name):
    """All CPUs, not only the listed ones: SMT is the CPU's 4 threads of its parity in its SMT8
    core, never 4 consecutive threads."""
    for c, lv in stated(name).items():
        base = c - c % 8
        assert lv[0] == ("SMT", {base + i for i in range(c % 2, 8, 2)}), f"cpu{c}"
        assert all(lv[0][1] < span for _, span in lv[1:]), f"cpu{c}"


def test_the_llc_is_the_big_core_on_power9_and_the_small_core_on_power10():
    # the highest level sharing the LLC (step 8): CACHE where it exists, else SMT
    assert [n for n, _ in stated("power9-bigcore")[0]] == ["SMT", "CACHE", "PKG", "NUMA"]
    assert [n for n, _ in stated("power10-smallcore")[0]] == ["SMT", "MC"]
    llc9 = stated("power9-bigcore")[0][1][1]
    llc10 = stated("power10-smallcore")[0][0][1]
    assert len(llc9) == 8 and len(llc10) == 4  # two small cores in POWER9's LLC, one in POWER10's


def test_power9_bigcore_has_the_fixtures_levels():
    """The captured POWER9 LPAR (DOMAINS.md T3): SMT, CACHE, DIE, NUMA; DIE is PKG since 6.7."""
    names = [line.split(":", 1)[1] for line in FIXTURE.read_text().splitlines()
             if line.split(":", 1)[0].endswith("/name")]
    assert names == ["SMT", "CACHE", "DIE", "NUMA"]
    assert [n for n, _ in PRESETS["power9-bigcore"]["domains"]] == \
        ["PKG" if n == "DIE" else n for n in names]


def smp_c_levels(shim, nodes):
    """The levels arch/powerpc/kernel/smp.c's build_sched_topology() builds (6.12) from the shim's
    inputs, as scopes, before degeneration (DOMAINS.md section 2), then NUMA with several
    nodes: SMT over the property-1 group; CACHE only when the L2 mask is larger than the small
    core (property 2 names the small core; else an l2-cache node per big core); MC only with a
    coregroup on a dedicated LPAR; PKG over the node."""
    out = [("SMT", "small-core" if 1 in shim["thread_groups"] else "core")]
    if 2 not in shim["thread_groups"] and (shim["l2_cache"] == "core"
                                            or shim["shared_processor"]):
        out.append(("CACHE", "core"))
    if shim["coregroup"] and not shim["shared_processor"]:
        out.append(("MC", shim["coregroup"]))
    out.append(("PKG", "node"))
    return out + ([("NUMA", "all")] if nodes > 1 else [])


def degenerate(topo, spec):
    """Drops a level whose span equals the one below it (PKG here: no flag the level below
    lacks, sd_parent_degenerate)."""
    want = expected_domains(topo, spec)[0]
    return [lv for i, lv in enumerate(spec) if i == 0 or want[i][1] != want[i - 1][1]]


@pytest.mark.parametrize("name", SHIM_PRESETS)
def test_the_statement_is_what_smp_c_builds_from_the_shims_inputs(name):
    p = PRESETS[name]
    t = expected_topology(p["smp"], p["numa"], p["arch"])
    assert p["shim"]["thread_groups"][1] == POWERVM_SMT8_GROUPS
    assert degenerate(t, smp_c_levels(p["shim"], len(t["nodes"]))) == p["domains"]


def test_a_consecutive_small_core_would_fail_the_statement(monkeypatch):
    """The check the issue asks for: with small cores of 4 consecutive threads the stated spans
    are not the sourced ones."""
    monkeypatch.setattr("wblab.qemu.POWERVM_SMT8_GROUPS", ((0, 1, 2, 3), (4, 5, 6, 7)))
    assert stated("power10-smallcore")[0][0] == ("SMT", {0, 1, 2, 3})
    assert stated("power10-smallcore")[0] != levels(POWER10_SMALLCORE[0])


def test_small_cores_are_an_smt8_cores_only():
    t = expected_topology("8,sockets=1,cores=2,threads=4", [], "ppc64le")
    with pytest.raises(LabError, match="scope small-core: cpu0 has none"):
        expected_domains(t, [("SMT", "small-core")])


# The guard: no preset waiting for its shim boots, whoever asks.
def test_the_presets_waiting_for_the_shim_are_exactly_these():
    assert sorted(p for p in PRESETS if missing_shim(p)) == SHIM_PRESETS
    for p in SHIM_PRESETS:
        assert PRESETS[p]["arch"] == "ppc64le" and "departures" not in PRESETS[p]
        with pytest.raises(LabError, match=f"preset {p} needs the lab's powervm-devicetree shim"):
            check_bootable(p)
    assert bootable_presets("ppc64le") == ["power10-smt8", "power9-smt8-2numa"]
    check_bootable("power10-smt8")  # no shim asked: boots as before


@pytest.fixture
def no_guest(monkeypatch):
    def boot(*_args, **_kwargs):
        raise AssertionError("a guest was booted")
    monkeypatch.setattr(wblab.cli, "run_guest", boot)
    monkeypatch.setattr(wblab.matrix, "run_guest", boot)


@pytest.mark.parametrize("extra", [[], ["--no-run"], ["--smp", "16,sockets=1,cores=2,threads=8"]])
def test_one_guest_refuses_a_preset_waiting_for_its_shim(extra, no_guest, capsys):
    assert main(["--preset", "power10-smallcore"] + extra) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs the lab's powervm-devicetree shim" in err


def test_check_names_the_missing_shim(no_guest, capsys):
    assert main(["--preset", "power9-bigcore", "--check"]) == 3
    assert "missing prerequisite: preset power9-bigcore needs" in capsys.readouterr().err


def test_the_matrix_refuses_it_by_name_and_leaves_it_out_by_default(tmp_path, no_guest, capsys):
    argv = ["matrix", "--presets", "power10-smt8,power9-bigcore", "--out", str(tmp_path)]
    assert main(argv) == 2
    assert "preset power9-bigcore needs the lab's" in capsys.readouterr().err
    args = wblab.matrix.parser().parse_args(["--arch", "ppc64le", "--kernels", "mainline"])
    assert wblab.matrix.checked(args)[0] == ["power10-smt8", "power9-smt8-2numa"]


def test_ci_boots_only_bootable_presets():
    """.ci/run's lab_guests lists the presets through bootable_presets, not PRESETS."""
    text = (REPO / ".ci/run").read_text()
    loop = text[text.index("lab_guests() {"):text.index("lab_arm64() {")]
    assert "bootable_presets(sys.argv[1])" in loop and "PRESETS" not in loop
