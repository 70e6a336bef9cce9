"""runners/lab/kernelbuild.py: policies, versions, config checks, exact patch application, cache
paths. Needs only python3-pytest and `patch` (no kernel source)."""
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kernelbuild as kb  # noqa: E402


def test_policies_and_alias():
    assert kb.resolve_policy("sync-pair") == "sync-pair"
    assert kb.resolve_policy("current-cpu") == "mainline"
    with pytest.raises(kb.BuildError, match="unknown policy 'sync-pear'"):
        kb.resolve_policy("sync-pear")
    # Every patched policy has its patch in the repository, with a header.
    for policy, name in kb.POLICIES.items():
        if name:
            text = (kb.PATCHES / name).read_text()
            assert kb.patch_header(text).startswith(policy + ":")
            assert kb.patched_files(text) == ["kernel/sched/fair.c"]


def test_versions():
    assert kb.upstream_version("6.12.117-1~deb12u1") == "6.12.117"
    assert kb.upstream_version("6.1-1") == "6.1"
    with pytest.raises(kb.BuildError):
        kb.upstream_version("~bpo")
    assert kb.makefile_version("# SPDX\nVERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 117\n"
                               "EXTRAVERSION =\n") == "6.12.117"
    assert kb.makefile_version("VERSION = 7\nPATCHLEVEL = 1\nSUBLEVEL =\n") == "7.1"
    with pytest.raises(kb.BuildError):
        kb.makefile_version("VERSION = 6\n")


def test_fragment_and_config_check():
    wanted = kb.parse_fragment("# comment\nCONFIG_SMP=y\nCONFIG_NR_CPUS=16\n"
                               "CONFIG_MODULES=n\n# CONFIG_HALTPOLL_CPUIDLE is not set\n")
    assert wanted == {"CONFIG_SMP": "y", "CONFIG_NR_CPUS": "16", "CONFIG_MODULES": "n",
                      "CONFIG_HALTPOLL_CPUIDLE": "n"}
    good = "CONFIG_SMP=y\nCONFIG_NR_CPUS=16\n# CONFIG_MODULES is not set\n"
    assert kb.config_mismatches(wanted, good) == []
    # A dropped option (dependency missing), a changed value, an option that should be off.
    bad = "CONFIG_NR_CPUS=8\nCONFIG_MODULES=y\nCONFIG_HALTPOLL_CPUIDLE=y\n"
    assert kb.config_mismatches(wanted, bad) == [
        "CONFIG_SMP=y asked, .config has it unset",
        "CONFIG_NR_CPUS=16 asked, .config has CONFIG_NR_CPUS=8",
        "CONFIG_MODULES=n asked, .config has CONFIG_MODULES=y",
        "CONFIG_HALTPOLL_CPUIDLE=n asked, .config has CONFIG_HALTPOLL_CPUIDLE=y"]
    with pytest.raises(kb.BuildError, match="line 1"):
        kb.parse_fragment("SMP=y\n")


def test_repository_fragments_parse():
    for lockdep in (False, True):
        opts = {}
        for f in kb.FRAGMENTS[lockdep]:
            opts.update(kb.parse_fragment(f.read_text()))
        assert opts["CONFIG_SCHED_SMT"] == "y" and opts["CONFIG_MODULES"] == "n"
        assert opts["CONFIG_PARAVIRT_SPINLOCKS"] == "n"
        assert ("CONFIG_PROVE_RCU" in opts) == lockdep


def test_patch_problems():
    assert kb.patch_problems("checking file kernel/sched/fair.c\n", 0) == []
    out = ("checking file kernel/sched/fair.c\n"
           "Hunk #1 succeeded at 7931 (offset -1236 lines).\n"
           "Hunk #2 succeeded at 7720 with fuzz 2 (offset -884 lines).\n"
           "Hunk #9 FAILED at 9750.\n1 out of 9 hunks FAILED\n")
    assert len(kb.patch_problems(out, 1)) == 4
    assert kb.patch_problems("", 2) == ["patch exited 2"]


def test_image_dir():
    d = kb.image_dir("/c", "6.12.117", "sync-pair", True, "ab" * 32, "cd" * 32)
    assert d == Path("/c/6.12.117-sync-pair-lockdep-abababababab-cdcdcdcdcdcd")
    assert kb.image_dir("/c", "6.12.117", "mainline", False, None, "cd" * 32).name == \
        "6.12.117-mainline-nopatch-cdcdcdcdcdcd"


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
    assert kb.check_patch(write_patch(tmp_path / "ok.patch", DIFF), root)
    # Same hunk, announced 2 lines too early: patch would apply it at an offset.
    off = write_patch(tmp_path / "off.patch", DIFF.replace("@@ -9,4 +9,5 @@", "@@ -7,4 +7,5 @@"))
    with pytest.raises(kb.BuildError, match="offset"):
        kb.check_patch(off, root)
    fuzz = write_patch(tmp_path / "fuzz.patch", DIFF.replace(" line 9\n", " line nine\n"))
    with pytest.raises(kb.BuildError, match="FAILED|fuzz"):
        kb.check_patch(fuzz, root)
    with pytest.raises(kb.BuildError, match="no header"):
        kb.check_patch(write_patch(tmp_path / "bare.patch", DIFF, header=""), root)
    outside = write_patch(tmp_path / "mm.patch", DIFF.replace("kernel/sched/x.c", "mm/x.c"))
    with pytest.raises(kb.BuildError, match="outside"):
        kb.check_patch(outside, root)


def test_restore_pristine(tmp_path, monkeypatch):
    monkeypatch.setattr(kb, "PATCHABLE", ["kernel/sched"])
    for d in ("src", "pristine"):
        (tmp_path / d / "kernel/sched").mkdir(parents=True)
        (tmp_path / d / "kernel/sched/x.c").write_text(FILE)
        (tmp_path / d / "kernel/sched/y.c").write_text("y\n")
    (tmp_path / "src/kernel/sched/x.c").write_text(FILE + "patched\n")
    (tmp_path / "src/kernel/sched/new.c").write_text("added by a patch\n")
    untouched = (tmp_path / "src/kernel/sched/y.c").stat().st_mtime_ns
    kb.restore_pristine(tmp_path)
    assert (tmp_path / "src/kernel/sched/x.c").read_text() == FILE
    assert not (tmp_path / "src/kernel/sched/new.c").exists()
    # Unchanged files keep their mtime, so make does not rebuild them.
    assert (tmp_path / "src/kernel/sched/y.c").stat().st_mtime_ns == untouched


def test_main_rejects_bad_input(capsys):
    assert kb.main(["--policy", "nope"]) == 2
    assert "unknown policy 'nope'" in capsys.readouterr().err
    assert kb.main([]) == 2
    assert kb.main(["--policy", "mainline", "--jobs", "0"]) == 2
