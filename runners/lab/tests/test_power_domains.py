"""Issue 51: the presets of PowerVM LPARs as sourced in runners/lab/power/DOMAINS.md
(power9-bigcore, power10-smallcore): their stated domains per CPU, interleaved small cores
included; the guard that keeps a guest from booting them without the device-tree shim; the
shim's command line from each preset's "shim" and its patch on the 6.12 source. Nothing here
boots (test_power_shim_captures.py holds the domains check to the shimmed guests' captures)."""
import pytest

import wblab.cli
import wblab.matrix
from wblab import REPO, LabError
from wblab.cli import main
from wblab.domains import expected_domains
import kerneltree as kt
from wblab import qemubin
from wblab.guest import GuestPlan, qemu_command
from wblab.lpar import CPUS
from wblab.qemu import POWERVM_SHIM, POWERVM_SMT8_GROUPS, PRESETS, SHIMS, bootable_presets, \
    check_bootable, expected_topology, missing_shim, shim_cmdline, unsupplied
from wblab.topology import topology_args

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


@pytest.mark.parametrize("name", SHIM_PRESETS)
def test_what_the_shimmed_guest_builds_is_the_statement_or_the_stated_departure(name):
    """smp.c's levels from what the lab's shim supplies (SHIM_CANNOT's inputs left out):
    power9-bigcore's statement itself; power10-smallcore's departure (no coregroup: PKG over the
    same 16 CPUs where the LPAR has MC)."""
    p = PRESETS[name]
    t = expected_topology(p["smp"], p["numa"], p["arch"])
    supplied = dict(p["shim"], **{k: None for k in unsupplied(p["shim"])})
    want = p["departures"]["domains"] if unsupplied(p["shim"]) else p["domains"]
    assert degenerate(t, smp_c_levels(supplied, len(t["nodes"]))) == want
    assert "departures" in p or name == "power9-bigcore"


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


# The guard: no preset waiting for a shim the lab lacks boots, whoever asks. The lab has the
# POWER one now (patches/shim/powervm-lpar.patch): the guard is shown with it taken away.
def test_the_matrix_leaves_presets_without_a_suite_out_of_its_defaults(tmp_path, monkeypatch):
    """Every bootable POWER preset has its suite (issue 51, item 4), so the defaults are all four;
    with the shimmed presets' suites taken away they are left out unless --cases gives one."""
    args = wblab.matrix.parser().parse_args(["--arch", "ppc64le", "--kernels", "mainline"])
    unshimmed = ["power10-smt8", "power9-smt8-2numa"]
    assert wblab.matrix.checked(args, tmp_path)[0] == unshimmed + SHIM_PRESETS[::-1]
    (tmp_path / "configs/lab").mkdir(parents=True)
    for p in ("power10-smt8", "power9-smt8-2numa"):
        (tmp_path / f"configs/lab/{p}.json").write_text("{}")
    monkeypatch.setattr("wblab.matrix.REPO", tmp_path)
    assert wblab.matrix.checked(args, tmp_path)[0] == ["power10-smt8", "power9-smt8-2numa"]
    suite = str(REPO / "configs/lab/power10-smt8.json")
    args = wblab.matrix.parser().parse_args(["--arch", "ppc64le", "--kernels", "mainline",
                                             "--cases", suite])
    assert wblab.matrix.checked(args, tmp_path)[0][2:] == SHIM_PRESETS[::-1]


def test_the_lab_has_the_powervm_shim_and_both_presets_boot():
    assert POWERVM_SHIM in SHIMS
    assert not [p for p in PRESETS if missing_shim(p)]
    for p in SHIM_PRESETS:
        check_bootable(p)
    assert bootable_presets("ppc64le") == ["power10-smt8", "power9-smt8-2numa", "power9-bigcore",
                                           "power10-smallcore"]


@pytest.fixture
def no_shims(monkeypatch):
    monkeypatch.setattr("wblab.qemu.SHIMS", frozenset())


def test_without_the_shim_the_presets_wait_for_it(no_shims):
    assert sorted(p for p in PRESETS if missing_shim(p)) == SHIM_PRESETS
    for p in SHIM_PRESETS:
        with pytest.raises(LabError, match=f"preset {p} needs the lab's powervm-devicetree shim"):
            check_bootable(p)
    assert bootable_presets("ppc64le") == ["power10-smt8", "power9-smt8-2numa"]
    check_bootable("power10-smt8")  # no shim asked: boots as before


def test_an_input_the_shim_cannot_supply_needs_a_stated_departure(monkeypatch):
    """power10-smallcore asks for a coregroup (SHIM_CANNOT) and states what its guest builds
    instead; without that statement it would not boot."""
    assert unsupplied(PRESETS["power10-smallcore"]["shim"]) == ["coregroup"]
    assert unsupplied(PRESETS["power9-bigcore"]["shim"]) == []
    p = dict(PRESETS["power10-smallcore"])
    del p["departures"]
    monkeypatch.setitem(PRESETS, "power10-smallcore", p)
    with pytest.raises(LabError, match="cannot supply its coregroup .* states no departure"):
        check_bootable("power10-smallcore")


@pytest.fixture
def no_guest(monkeypatch):
    def boot(*_args, **_kwargs):
        raise AssertionError("a guest was booted")
    monkeypatch.setattr(wblab.cli, "run_guest", boot)
    monkeypatch.setattr(wblab.matrix, "run_guest", boot)


@pytest.mark.parametrize("extra", [[], ["--no-run"], ["--smp", "16,sockets=1,cores=2,threads=8"]])
def test_one_guest_refuses_a_preset_waiting_for_its_shim(extra, no_guest, no_shims, capsys):
    assert main(["--preset", "power10-smallcore"] + extra) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs the lab's powervm-devicetree shim" in err


def test_check_names_the_missing_shim(no_guest, no_shims, capsys):
    assert main(["--preset", "power9-bigcore", "--check"]) == 3
    assert "missing prerequisite: preset power9-bigcore needs" in capsys.readouterr().err


def test_the_matrix_refuses_it_by_name_and_leaves_it_out_by_default(tmp_path, no_guest, no_shims,
                                                                     capsys):
    argv = ["matrix", "--presets", "power10-smt8,power9-bigcore", "--out", str(tmp_path)]
    assert main(argv) == 2
    assert "preset power9-bigcore needs the lab's" in capsys.readouterr().err
    args = wblab.matrix.parser().parse_args(["--arch", "ppc64le", "--kernels", "mainline"])
    assert wblab.matrix.checked(args, tmp_path)[0] == ["power10-smt8", "power9-smt8-2numa"]


# The shim's command line: one fact (the preset's "shim"), read by the patch's prom_init.c and
# pseries/lpar.c.
def test_the_command_line_comes_from_each_presets_shim():
    assert shim_cmdline(PRESETS["power9-bigcore"]["shim"]) == \
        "wblab_shim=tg1,l2=512,l3=10240,dedicated"
    assert shim_cmdline(PRESETS["power10-smallcore"]["shim"]) == "wblab_shim=tg12,dedicated"
    shared = dict(PRESETS["power9-bigcore"]["shim"], shared_processor=True, l2_cache=None,
                  cache_kib=None)
    assert shim_cmdline(shared) == "wblab_shim=tg1"


def test_the_shims_cache_sizes_are_the_lpars():
    """The shim's l2-cache and l3-cache nodes have the sizes wblab.lpar states for POWER9."""
    sizes = {lvl: kib for lvl, _, kib in CPUS["power9"][2] if lvl > 1}
    assert PRESETS["power9-bigcore"]["shim"]["cache_kib"] == sizes


@pytest.mark.parametrize("change, msg", [
    ({"name": "other"}, "shim 'other': the lab has powervm-devicetree"),
    ({"thread_groups": {2: POWERVM_SMT8_GROUPS}}, "properties 1 or 1 and 2"),
    ({"thread_groups": {1: ((0, 1, 2, 3), (4, 5, 6, 7))}}, "interleaved small cores"),
    ({"cache_kib": {2: 0}}, "KiB of the L2"),
    ({"cache_kib": {3: 1024}}, "KiB of the L2"),
    ({"l2_cache": "node"}, "'core' \\(with cache_kib\\) or None"),
])
def test_a_shim_the_patch_cannot_write_is_one_line(change, msg):
    with pytest.raises(LabError, match=msg) as e:
        shim_cmdline(dict(PRESETS["power9-bigcore"]["shim"], **change))
    assert "\n" not in str(e.value)


def test_qemu_carries_the_shim_and_no_shim_leaves_it_out():
    on = topology_args("power9-bigcore")
    assert on["shim"] == "wblab_shim=tg1,l2=512,l3=10240,dedicated"
    assert on["caches"] == {2: "core", 3: "core"}  # the sysfs check holds the shim's cache nodes
    off = topology_args("power9-bigcore", shim=False)
    assert off["shim"] is None and off["caches"] is None
    assert topology_args("power10-smallcore")["caches"] is None  # L1 only: no cache nodes
    assert topology_args("power10-smt8")["shim"] is None
    with pytest.raises(LabError, match="--no-shim: preset power10-smt8 has no shim"):
        topology_args("power10-smt8", shim=False)
    plan = GuestPlan(kernel="vmlinux", policy="gated", lab_kernel={}, wakebench="wb", config=None,
                     out="o", **on)
    append = qemu_command(plan, qemubin.Qemu("qemu-system-ppc64", (10, 0, 2), ""),
                          "i", "c", "x")
    append = append[append.index("-append") + 1]
    assert append == ("console=hvc0 panic=-1 quiet sched_verbose "
                      "wblab_shim=tg1,l2=512,l3=10240,dedicated")


SHIM_PATCH = kt.ARCH_PATCHES["ppc64le"][0]


def test_the_shim_patch_is_ppc64le_only_and_touches_no_scheduler():
    assert kt.kernel_patches("gated", arch="ppc64le")[-1] == SHIM_PATCH
    for arch in ("x86_64", "arm64", None):
        assert SHIM_PATCH not in kt.kernel_patches("gated", arch=arch)
        assert kt.kernel_patches("mainline", arch=arch) == [kt.TRACE / "mainline.patch"]
    text = SHIM_PATCH.read_text()
    assert kt.patched_files(text) == ["arch/powerpc/kernel/prom_init.c",
                                      "arch/powerpc/platforms/pseries/lpar.c"]
    assert "smp.c:" in kt.patch_header(text) and "kernel/sched" in kt.patch_header(text)
    assert all(len(line) <= 100 for line in text.splitlines())


@pytest.mark.skipif(not kt.TARBALL.is_file(), reason=f"{kt.TARBALL} absent (apt-get install "
                    f"{kt.PACKAGE}): the shim patch is not applied to the 6.12 source here")
def test_the_shim_patch_applies_exactly_to_the_612_source(tmp_path):
    root = kt.extract(["arch/powerpc/kernel/prom_init.c",
                       "arch/powerpc/platforms/pseries/lpar.c"], tmp_path)
    kt.check_patch(SHIM_PATCH, root)
    kt.apply_patches([SHIM_PATCH], root)
    prom = (root / "arch/powerpc/kernel/prom_init.c").read_text()
    # the tokens shim_cmdline() writes are the ones prom_init.c parses
    for token in ("tg12", "tg1", "l2", "l3", "dedicated", "wblab_shim="):
        assert f'"{token}"' in prom
    assert "fixup_device_tree_wblab_shim();" in prom
    lpar = (root / "arch/powerpc/platforms/pseries/lpar.c").read_text()
    assert 'early_param("wblab_shim"' in lpar and 'parse_option_str(p, "dedicated")' in lpar


def test_ci_boots_only_bootable_presets():
    """.ci/run's lab_guests lists the presets through bootable_presets, not PRESETS."""
    text = (REPO / ".ci/run").read_text()
    loop = text[text.index("lab_guests() {"):text.index("lab_arm64() {")]
    assert "bootable_presets(sys.argv[1])" in loop and "PRESETS" not in loop


def test_the_ppc64le_kernel_has_room_for_every_power_presets_vcpus():
    """A preset's "nr_cpus" (and its -smp) within the ppc64le kernel's CONFIG_NR_CPUS."""
    frag = {}
    for f in ("kernel.config", "kernel-ppc64le.config"):  # merge order: the arch's wins
        frag.update(kt.parse_fragment((kt.HERE / f).read_text()))
    for name, p in PRESETS.items():
        if p.get("arch") == "ppc64le":
            vcpus = expected_topology(p["smp"], p["numa"], "ppc64le")["smp"]["cpus"]
            need = max(vcpus, p.get("shim", {}).get("nr_cpus", 0))
            assert need <= int(frag["CONFIG_NR_CPUS"]), name
