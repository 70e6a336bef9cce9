"""runners/lab/kernelbuild.py, kerneltree.py and kernelcompare.py: policies, versions, config
checks, exact patch application, cache paths, the disassembly comparisons. Needs only
python3-pytest and `patch` (no kernel source)."""
import platform
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kernelbuild as kb  # noqa: E402
import kernelcompare as kc  # noqa: E402
import kerneltree as kt  # noqa: E402


def test_policies_and_alias():
    assert kb.resolve_policy("sync-pair") == "sync-pair"
    assert kb.resolve_policy("current-cpu") == "mainline"
    with pytest.raises(kt.BuildError, match="unknown policy 'sync-pear'"):
        kb.resolve_policy("sync-pear")
    # Every patched policy has its patch in the repository, with a header.
    for policy, name in kt.POLICIES.items():
        if name:
            text = (kt.PATCHES / name).read_text()
            assert kt.patch_header(text).startswith(policy + ":")
            assert kt.patched_files(text) == ["kernel/sched/fair.c"]


def test_versions():
    assert kt.upstream_version("6.12.117-1~deb12u1") == "6.12.117"
    assert kt.upstream_version("6.1-1") == "6.1"
    with pytest.raises(kt.BuildError):
        kt.upstream_version("~bpo")
    assert kt.makefile_version("# SPDX\nVERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 117\n"
                               "EXTRAVERSION =\n") == "6.12.117"
    assert kt.makefile_version("VERSION = 7\nPATCHLEVEL = 1\nSUBLEVEL =\n") == "7.1"
    with pytest.raises(kt.BuildError):
        kt.makefile_version("VERSION = 6\n")


def test_fragment_and_config_check():
    wanted = kt.parse_fragment("# comment\nCONFIG_SMP=y\nCONFIG_NR_CPUS=16\n"
                               "CONFIG_MODULES=n\n# CONFIG_HALTPOLL_CPUIDLE is not set\n")
    assert wanted == {"CONFIG_SMP": "y", "CONFIG_NR_CPUS": "16", "CONFIG_MODULES": "n",
                      "CONFIG_HALTPOLL_CPUIDLE": "n"}
    good = "CONFIG_SMP=y\nCONFIG_NR_CPUS=16\n# CONFIG_MODULES is not set\n"
    assert kt.config_mismatches(wanted, good) == []
    # A dropped option (dependency missing), a changed value, an option that should be off.
    bad = "CONFIG_NR_CPUS=8\nCONFIG_MODULES=y\nCONFIG_HALTPOLL_CPUIDLE=y\n"
    assert kt.config_mismatches(wanted, bad) == [
        "CONFIG_SMP=y asked, .config has it unset",
        "CONFIG_NR_CPUS=16 asked, .config has CONFIG_NR_CPUS=8",
        "CONFIG_MODULES=n asked, .config has CONFIG_MODULES=y",
        "CONFIG_HALTPOLL_CPUIDLE=n asked, .config has CONFIG_HALTPOLL_CPUIDLE=y"]
    with pytest.raises(kt.BuildError, match="line 1"):
        kt.parse_fragment("SMP=y\n")


def test_repository_fragments_parse():
    for arch in kb.ARCHES:
        for lockdep in (False, True):
            opts = {}
            for f in kb.fragments(arch, lockdep):
                opts.update(kt.parse_fragment(f.read_text()))
            assert opts["CONFIG_SCHED_SMT"] == "y" and opts["CONFIG_MODULES"] == "n"
            assert ("CONFIG_PARAVIRT_SPINLOCKS" in opts) == (arch == "x86_64")
            assert ("CONFIG_PROVE_RCU" in opts) == lockdep
    with pytest.raises(kt.BuildError, match="unknown architecture 'mips'"):
        kb.fragments("mips", False)


def test_cross_compiler_per_arch(monkeypatch):
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    assert "CROSS_COMPILE" not in kt.make_env("x86_64")
    env = kt.make_env("arm64")
    assert env["ARCH"] == "arm64" and env["CROSS_COMPILE"] == "aarch64-linux-gnu-"
    assert kt.make_env("ppc64le")["ARCH"] == "powerpc"
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    assert "CROSS_COMPILE" not in kt.make_env("arm64")
    assert kt.make_env("x86_64")["CROSS_COMPILE"] == "x86_64-linux-gnu-"
    assert kb.build_dir_name("x86_64", True) == "build-lockdep"
    assert kb.build_dir_name("arm64", False) == "build-arm64"


def test_patch_problems():
    assert kt.patch_problems("checking file kernel/sched/fair.c\n", 0) == []
    out = ("checking file kernel/sched/fair.c\n"
           "Hunk #1 succeeded at 7931 (offset -1236 lines).\n"
           "Hunk #2 succeeded at 7720 with fuzz 2 (offset -884 lines).\n"
           "Hunk #9 FAILED at 9750.\n1 out of 9 hunks FAILED\n")
    assert len(kt.patch_problems(out, 1)) == 4
    assert kt.patch_problems("", 2) == ["patch exited 2"]


def test_image_dir():
    d = kb.image_dir("/c", "6.12.117", "x86_64", "sync-pair", True, "ab" * 32, "cd" * 32)
    assert d == Path("/c/6.12.117-x86_64-sync-pair-lockdep-abababababab-cdcdcdcdcdcd")
    assert kb.image_dir("/c", "6.12.117", "arm64", "mainline", False, None, "cd" * 32).name == \
        "6.12.117-arm64-mainline-nopatch-cdcdcdcdcdcd"


def write_patch(path, body, header="demo: a test patch\n\n"):
    path.write_text(header + body)
    return path


FILE = "".join(f"line {i}\n" for i in range(1, 21))
DIFF = ("diff --git a/kernel/sched/x.c b/kernel/sched/x.c\n--- a/kernel/sched/x.c\n"
        "+++ b/kernel/sched/x.c\n@@ -9,4 +9,5 @@\n line 9\n line 10\n+new\n line 11\n line 12\n")


@pytest.mark.skipif(subprocess.run(["which", "patch"], capture_output=True).returncode,
                    reason="patch not installed")
def test_check_patch_exact_offset_fuzz(tmp_path):
    root = tmp_path / "src"
    (root / "kernel/sched").mkdir(parents=True)
    (root / "kernel/sched/x.c").write_text(FILE)
    assert kt.check_patch(write_patch(tmp_path / "ok.patch", DIFF), root)
    # Same hunk, announced 2 lines too early: patch would apply it at an offset.
    off = write_patch(tmp_path / "off.patch", DIFF.replace("@@ -9,4 +9,5 @@", "@@ -7,4 +7,5 @@"))
    with pytest.raises(kt.BuildError, match="offset"):
        kt.check_patch(off, root)
    fuzz = write_patch(tmp_path / "fuzz.patch", DIFF.replace(" line 9\n", " line nine\n"))
    with pytest.raises(kt.BuildError, match="FAILED|fuzz"):
        kt.check_patch(fuzz, root)
    with pytest.raises(kt.BuildError, match="no header"):
        kt.check_patch(write_patch(tmp_path / "bare.patch", DIFF, header=""), root)
    outside = write_patch(tmp_path / "mm.patch", DIFF.replace("kernel/sched/x.c", "mm/x.c"))
    with pytest.raises(kt.BuildError, match="outside"):
        kt.check_patch(outside, root)


def test_restore_pristine(tmp_path, monkeypatch):
    monkeypatch.setattr(kt, "PATCHABLE", ["kernel/sched"])
    for d in ("src", "pristine"):
        (tmp_path / d / "kernel/sched").mkdir(parents=True)
        (tmp_path / d / "kernel/sched/x.c").write_text(FILE)
        (tmp_path / d / "kernel/sched/y.c").write_text("y\n")
    (tmp_path / "src/kernel/sched/x.c").write_text(FILE + "patched\n")
    (tmp_path / "src/kernel/sched/new.c").write_text("added by a patch\n")
    untouched = (tmp_path / "src/kernel/sched/y.c").stat().st_mtime_ns
    kt.restore_pristine(tmp_path)
    assert (tmp_path / "src/kernel/sched/x.c").read_text() == FILE
    assert not (tmp_path / "src/kernel/sched/new.c").exists()
    # Unchanged files keep their mtime, so make does not rebuild them.
    assert (tmp_path / "src/kernel/sched/y.c").stat().st_mtime_ns == untouched


def test_main_rejects_bad_input(capsys):
    assert kb.main(["--policy", "nope"]) == 2
    assert "unknown policy 'nope'" in capsys.readouterr().err
    assert kb.main([]) == 2
    assert kb.main(["--policy", "mainline", "--jobs", "0"]) == 2
    assert kb.main(["--gated", "--policy", "sync-core"]) == 2
    assert "--gated and --policy sync-core: give one" in capsys.readouterr().err
    assert kb.main(["--gated", "--distro-config", "--lockdep"]) == 2
    assert "no --lockdep" in capsys.readouterr().err


def test_gated_kernel_name_and_patches(tmp_path):
    assert kb.chosen_kernel(None, True) == kb.chosen_kernel("gated", False) == "gated"
    assert kb.chosen_kernel("gated", True) == "gated"
    assert kb.chosen_kernel("current-cpu", False) == "mainline"
    with pytest.raises(kt.BuildError, match="give --policy NAME, --gated"):
        kb.chosen_kernel(None, False)
    # Every kernel ends with its series' decision-event patch, after its policy patches.
    assert kt.kernel_patches("mainline") == [kt.TRACE / "mainline.patch"]
    assert kt.kernel_patches("sync-pair") == [kt.PATCHES / "sync-pair.patch",
                                              kt.TRACE / "sync-pair.patch"]
    # The series: every *.patch of its directory in name order, nothing else.
    for name in ("0002-b.patch", "0001-a.patch", "README"):
        (tmp_path / name).write_text(name)
    assert [p.name for p in kt.policy_patches("gated", tmp_path)] == ["0001-a.patch",
                                                                       "0002-b.patch"]
    assert kt.kernel_patches("gated", tmp_path)[-1] == kt.TRACE / "gated.patch"
    assert kb.patches_sha(kt.policy_patches("gated", tmp_path)) == \
        kt.sha256(b"0001-a.patch0002-b.patch")
    assert kb.patches_sha([]) is None
    # One patch hashes as before the series existed: the cached images keep their names.
    one = kt.PATCHES / "sync-core.patch"
    assert kb.patches_sha([one]) == kt.sha256(one.read_bytes())
    with pytest.raises(kt.BuildError, match="no \\*.patch"):
        kt.series_files(tmp_path / "README")
    d = kb.image_dir("/c", "6.12.117", "x86_64", "gated", False, "ef" * 32, "cd" * 32)
    assert d.name == "6.12.117-x86_64-gated-efefefefefef-cdcdcdcdcdcd"


def test_repository_series():
    """patches/gated: one patch per patched policy, in the registry's order, each with a header
    naming its policy and the per-policy patch it ports, touching only fair.c and features.h."""
    files = kt.series_files(kt.SERIES)
    assert [f.name.split("-", 1)[1] for f in files] == [f"{p}.patch" for p in kt.FEATURES]
    for f, policy in zip(files, kt.FEATURES):
        text = f.read_text()
        assert kt.patch_header(text).startswith(f"gated {files.index(f) + 1}/{len(files)} "
                                                f"{policy}:")
        assert f"../{policy}.patch" in kt.patch_header(text)
        assert kt.patched_files(text) == ["kernel/sched/fair.c", "kernel/sched/features.h"]
        assert f"+SCHED_FEAT({kt.FEATURES[policy]}, false)" in text
        assert f"sched_feat({kt.FEATURES[policy]})" in text


def test_feature_problems():
    features = {"sync-pair": "SYNC_PAIR", "sync-core": "SYNC_CORE"}
    h = "SCHED_FEAT(NI_RANDOM, true)\nSCHED_FEAT(SYNC_PAIR, false)\nSCHED_FEAT(SYNC_CORE, false)\n"
    c = "if (sched_feat(SYNC_PAIR) && sync)\n\tif (sched_feat(SYNC_CORE))\n"
    assert kt.feature_problems(h, c, features) == []
    # On by default, declared twice, never declared; never tested (a prefix is not a test).
    on = h.replace("SYNC_PAIR, false", "SYNC_PAIR, true")
    assert kt.feature_problems(on, c, features) == [
        "sync-pair: features.h has 1 SCHED_FEAT(SYNC_PAIR, ...), want one, false (true)"]
    twice = h + "SCHED_FEAT(SYNC_CORE, false)\n"
    assert "has 2 SCHED_FEAT(SYNC_CORE" in kt.feature_problems(twice, c, features)[0]
    assert kt.feature_problems("", c, features)[0].endswith("want one, false (none)")
    untested = "if (sched_feat(SYNC_CORE_V2))\n"
    assert kt.feature_problems(h, untested, features) == [
        "sync-pair: fair.c never tests sched_feat(SYNC_PAIR)",
        "sync-core: fair.c never tests sched_feat(SYNC_CORE)"]


def test_compile_warnings():
    log = ("  CC      kernel/sched/fair.o\n"
           "../src/kernel/sched/fair.c:7801:12: warning: unused variable 'x' [-Wunused-variable]\n"
           "../src/kernel/sched/core.c:1:1: error: expected ';'\n"
           "  LD [M]  kernel/sched/built-in.a\n")
    assert [w.split(":")[1] for w in kc.compile_warnings(log)] == ["7801", "1"]
    assert kc.compile_warnings("  CC      kernel/sched/core.o\n") == []


@pytest.mark.skipif(subprocess.run(["which", "patch"], capture_output=True).returncode,
                    reason="patch not installed")
def test_apply_patches_in_order(tmp_path):
    root = tmp_path / "src"
    (root / "kernel/sched").mkdir(parents=True)
    (root / "kernel/sched/x.c").write_text(FILE)
    first = write_patch(tmp_path / "1.patch", DIFF)
    # The second patch's context is what the first one left: it applies only after it.
    second = write_patch(tmp_path / "2.patch", DIFF.replace(
        "@@ -9,4 +9,5 @@\n line 9\n line 10\n+new\n line 11\n line 12\n",
        "@@ -10,4 +10,5 @@\n line 10\n new\n+newer\n line 11\n line 12\n"))
    with pytest.raises(kt.BuildError, match="does not apply exactly"):
        kt.apply_patches([second], root)
    assert len(kt.apply_patches([first, second], root)) == 2
    assert "line 10\nnew\nnewer\nline 11\n" in (root / "kernel/sched/x.c").read_text()


def test_lab_holds_a_gated_image_to_mainline(tmp_path):
    """wblab/kernel.py: a gated image (meta.json policy "gated") boots with every feature off,
    so the guest is held to mainline's model; --policy may only name that."""
    import json
    from wblab import LabError
    from wblab.kernel import resolve_kernel
    img = tmp_path / "bzImage"
    img.write_bytes(b"MZ")
    features = {"sync-pair": "SYNC_PAIR", "sync-core": "SYNC_CORE"}
    (tmp_path / "meta.json").write_text(json.dumps({
        "policy": "gated", "source_version": "6.12.117", "patch_sha256": "ef" * 32,
        "features": features}))
    for asked in (None, "mainline"):
        _, policy, info = resolve_kernel(str(img), asked)
        assert policy == info["policy"] == "mainline"
        assert info["kernel"] == "gated" and info["features"] == features
        assert "every sched feature off" in info["note"] and info["patch_sha256"] == "ef" * 32
    with pytest.raises(LabError, match="runs policy mainline .* not --policy sync-core"):
        resolve_kernel(str(img), "sync-core")


def test_specialise():
    src = ("if (sched_feat(SYNC_PAIR) && sync)\n"
           "if ((sched_feat(SYNC_CORE) || sched_feat(SYNC_CORE_V2)) && x)\n"
           "if (sched_feat(WA_IDLE)) /* sched_feat(SYNC_CORE_V2X) is another name */\n")
    names = ["SYNC_PAIR", "SYNC_CORE", "SYNC_CORE_V2"]
    assert kc.specialise(src, "SYNC_CORE_V2", names) == (
        "if (0 && sync)\nif ((0 || 1) && x)\n"
        "if (sched_feat(WA_IDLE)) /* sched_feat(SYNC_CORE_V2X) is another name */\n")
    assert kc.specialise(src, None, names).count("1") == 0


CMD = ("savedcmd_kernel/sched/fair.o := gcc -Wp,-MMD,kernel/sched/.fair.o.d -nostdinc -O2 "
       "-DKBUILD_MODFILE='\"kernel/sched/fair\"' -c -o kernel/sched/fair.o /src/kernel/sched/fair.c"
       "   ; ./tools/objtool/objtool --static-call   kernel/sched/fair.o\n\n"
       "source_kernel/sched/fair.o := /src/kernel/sched/fair.c\n")


def test_compile_command():
    assert kc.compile_command(CMD, "/t/fair.c", "/t/fair.o") == [
        "gcc", "-nostdinc", "-O2", '-DKBUILD_MODFILE="kernel/sched/fair"', "-c", "-o",
        "/t/fair.o", "/t/fair.c"]
    for bad in ("", "gcc -c x.c\n", "savedcmd_x := gcc -c x.c\n"):
        with pytest.raises(kt.BuildError, match="not a kbuild .o.cmd"):
            kc.compile_command(bad, "a.c", "a.o")


DIS = """
fair.o:     file format elf64-x86-64


Disassembly of section .text:

0000000000000010 <f>:
  10:	push   %rbx
  11:	call   16 <f+0x6>
			12: R_X86_64_PLT32	g-0x4
  16:	mov    $0x0,%rdx
			19: R_X86_64_32S	.text+0x5c40
  1d:	ret

0000000000000020 <g.constprop.0>:
  20:	ret
"""


def test_objdump_functions_and_differences():
    funcs = kc.objdump_functions(DIS)
    assert funcs == {"f": ["push   %rbx", "call   <f+0x6>", "R_X86_64_PLT32\tg-0x4",
                           "mov    $0x0,%rdx", "R_X86_64_32S\t.text+X", "ret"],
                     "g.constprop.0": ["ret"]}
    # The same code at other addresses (another function grew before it) is the same.
    moved = kc.objdump_functions(DIS.replace("  16:", "  26:").replace("0x5c40", "0x5c80"))
    assert kc.function_differences(moved, funcs) == (["f", "g.constprop.0"], [], [])
    other = dict(funcs, h=["ret"], f=funcs["f"][:-1] + ["nop", "ret"])
    assert kc.function_differences(other, funcs) == (["f", "g.constprop.0"], ["f"], ["h"])
