"""runners/lab/kerneluser.py: a user's patch on the lab's source (applies, refused naming the
first failing hunk, a file that is not there, a file outside kernel/sched), the decision event
after it (next to an instrumented return: instrumented; rewriting one: refused naming the edit),
--kernel-tree's version check and shadow, and the cache identities. The trees are the committed
fixtures/userkernel/ and a fake fair.c/core.c made of tracepatch's own anchors; no kernel source,
no build."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kernelbuild as kb  # noqa: E402
import kerneltree as kt  # noqa: E402
import kerneluser as ku  # noqa: E402
from wblab import tracepatch  # noqa: E402

FIX = Path(__file__).resolve().parent / "fixtures" / "userkernel"
needs_patch = pytest.mark.skipif(shutil.which("patch") is None, reason="patch not installed")
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def tree_copy(tmp_path):
    root = tmp_path / "src"
    shutil.copytree(FIX / "tree", root)
    return root


def refused(call, *args):
    """The BuildError message of call(*args), checked to be one line."""
    with pytest.raises(kt.BuildError) as e:
        call(*args)
    assert "\n" not in str(e.value)
    return str(e.value)


def test_diff_files_and_hunk_headers():
    text = (FIX / "missing-file.patch").read_text()
    assert ku.diff_files(text) == [("kernel/sched/x.c", ["@@ -15,5 +15,5 @@"], False),
                                   ("kernel/sched/nope.c", ["@@ -1,3 +1,4 @@"], False)]
    new = "--- /dev/null\n+++ b/kernel/sched/n.c\t2024-01-01\n@@ -0,0 +1 @@ f\n+x\n"
    assert ku.diff_files(new) == [("kernel/sched/n.c", ["@@ -0,0 +1 @@"], True)]
    gone = "--- a/kernel/sched/o.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    assert ku.diff_files(gone) == [("kernel/sched/o.c", ["@@ -1 +0,0 @@"], False)]
    assert ku.file_problem([], "/") .startswith("not a unified diff")


@needs_patch
def test_a_patch_applies_with_an_offset(tmp_path):
    root = tree_copy(tmp_path)
    moved = ku.apply_user_patch(FIX / "applies.patch", root)
    assert moved == ["hunk 1 of kernel/sched/x.c at offset -2"]
    text = (root / "kernel/sched/x.c").read_text()
    assert "\tif (cpu == 1)\n\t\treturn 2;\n" in text and "return cpu * 3 + 1;" in text
    # Applied twice, its context is gone: the first hunk fails (no fuzz, not taken as reversed).
    assert "hunk 1 of kernel/sched/x.c (@@ -5,6 +5,8 @@) does not apply" in \
        refused(ku.apply_user_patch, FIX / "applies.patch", root)


@needs_patch
def test_a_failing_hunk_is_named(tmp_path):
    patch = FIX / "hunk2-fails.patch"
    msg = refused(ku.apply_user_patch, patch, tree_copy(tmp_path))
    assert msg == (f"patch {patch}: hunk 2 of kernel/sched/x.c (@@ -15,5 +17,5 @@) does not "
                   "apply (exact context; offsets allowed, no fuzz); nothing built")


@needs_patch
def test_a_file_that_is_not_there_and_one_outside_sched(tmp_path):
    root = tree_copy(tmp_path)
    before = (root / "kernel/sched/x.c").read_text()
    msg = refused(ku.apply_user_patch, FIX / "missing-file.patch", root)
    assert msg.endswith(": hunk 1 of kernel/sched/nope.c (@@ -1,3 +1,4 @@) does not apply: "
                        "kernel/sched/nope.c does not exist in the source; nothing built")
    assert (root / "kernel/sched/x.c").read_text() == before  # refused before patch ran
    msg = refused(ku.apply_user_patch, FIX / "outside.patch", root)
    assert ": touches include/linux/sched.h, outside kernel/sched (" in msg
    # The same file present: that patch's problem is gone.
    (root / "kernel/sched/nope.c").write_text("a\nb\nd\n")
    assert ku.apply_user_patch(FIX / "missing-file.patch", root) == []


def test_patch_output_reading():
    files = [("kernel/sched/fair.c", ["@@ -10,7 +10,8 @@", "@@ -7620,7 +7621,8 @@"], False)]
    out = ("patching file kernel/sched/fair.c\nHunk #1 succeeded at 12 (offset 2 lines).\n"
           "Hunk #2 FAILED at 7621.\n1 out of 2 hunks FAILED\n")
    assert ku.failed_hunk(out, files) == "hunk 2 of kernel/sched/fair.c (@@ -7620,7 +7621,8 @@)"
    assert ku.offsets(out) == ["hunk 1 of kernel/sched/fair.c at offset 2"]
    assert ku.failed_hunk(out.replace("FAILED at", "ignored at"), files) is None


# A fair.c and a core.c made of every anchor tracepatch's edits look for, each between three
# lines of its own before and after (so a patch's context stays inside one anchor's block).
SELECT_IDLE_CPU = ("\ti = select_idle_cpu(p, sd, has_idle_core, target);\n"
                   "\tif ((unsigned)i < nr_cpumask_bits)\n\t\treturn i;")


def block(where, code):
    name = where.replace(" ", "_")
    return "".join(f"/* {name} {i} */\n" for i in (1, 2, 3)) + code + "\n" + \
        "".join(f"/* {name} {i} */\n" for i in (4, 5, 6))


def fake_pristine(tmp_path):
    """<tmp>/pristine/kernel/sched/{fair.c, core.c}: the anchors, nothing else."""
    sched = tmp_path / "pristine/kernel/sched"
    sched.mkdir(parents=True)
    (sched / "fair.c").write_text("".join(block(w, old) for w, old, _ in tracepatch.FAIR_EDITS)
                                  + block("sis select_idle_cpu", SELECT_IDLE_CPU))
    (sched / "core.c").write_text("".join(block(w, old) for w, old, _ in tracepatch.CORE_EDITS))
    return tmp_path / "pristine"


@needs_patch
def test_the_event_after_a_patch_next_to_a_return(tmp_path):
    root, event, moved = ku.patched_sched(FIX / "next-to-return.patch", fake_pristine(tmp_path),
                                          tmp_path / "work")
    fair = (root / "kernel/sched/fair.c").read_text()
    assert "\t\t\treturn wb_ret(WB_SIS_PREV, prev);\n\t\tprev_aff = -1;" in fair
    assert "+\t\t\treturn wb_ret(WB_SIS_PREV, prev);" in event
    assert (root / "kernel/sched/wb_decision.h").is_file()
    # The fake's line numbers follow tracepatch's edits (more edits, later lines): an offset.
    assert all(m.startswith("hunk 1 of kernel/sched/fair.c at offset ") for m in moved)
    assert event.startswith("wakebench lab only: the sched_wake_decision event after the user's "
                            "patch ")
    # The same patch elsewhere: the same event, byte for byte (its sha names the image).
    elsewhere = tmp_path / "elsewhere.patch"
    shutil.copyfile(FIX / "next-to-return.patch", elsewhere)
    assert ku.patched_sched(elsewhere, tmp_path / "pristine", tmp_path / "work2")[1] == event


@needs_patch
def test_the_event_refuses_a_patch_that_rewrites_a_return(tmp_path):
    patch = FIX / "rewrites-return.patch"
    msg = refused(ku.patched_sched, patch, fake_pristine(tmp_path), tmp_path / "work")
    assert msg.startswith(f"patch {patch}: the decision event cannot be instrumented after it: "
                          "fair.c sis prev: expected one match, found 0: ")


def test_tree_version():
    make = (FIX / "tree/Makefile").read_text()
    assert ku.tree_version(make, "t") == "6.12.118"
    assert ku.tree_version(make.replace("SUBLEVEL = 118", "SUBLEVEL ="), "t") == "6.12"
    for other, shown in (("PATCHLEVEL = 13", "6.13.118"), ("PATCHLEVEL = 1", "6.1.118"),
                         ("PATCHLEVEL = 120", "6.120.118")):  # 6.12 is not a prefix
        msg = refused(ku.tree_version, make.replace("PATCHLEVEL = 12", other), "--kernel-tree t")
        assert msg.startswith(f"--kernel-tree t: Linux {shown} (its Makefile); the decision "
                              "event's edits are written for 6.12.y only")


def kernel_tree(tmp_path, patchlevel=12):
    tree = tmp_path / "linux"
    shutil.copytree(FIX / "tree", tree)
    fake = fake_pristine(tmp_path) / "kernel/sched"
    for n in ("fair.c", "core.c"):
        shutil.copyfile(fake / n, tree / "kernel/sched" / n)
    make = tree / "Makefile"
    make.write_text(make.read_text().replace("PATCHLEVEL = 12", f"PATCHLEVEL = {patchlevel}"))
    return tree


def test_kernel_tree_is_checked_before_anything(tmp_path, capsys):
    tree = kernel_tree(tmp_path, 13)
    assert kb.main(["--kernel-tree", str(tree)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--kernel-tree {tree}: Linux 6.13.118 (its Makefile)" in err
    tree = kernel_tree(tmp_path / "b")
    assert ku.check_tree(tree) == "6.12.118"
    (tree / ".config").write_text("CONFIG_SMP=y\n")
    assert "has .config (built in place)" in refused(ku.check_tree, tree)
    assert "no kernel/sched/fair.c (not a kernel tree)" in refused(ku.check_tree, FIX / "tree")
    assert "no Makefile (not a kernel tree)" in refused(ku.check_tree, FIX / "tree/kernel")
    assert kb.main(["--patch", "x.patch", "--policy", "mainline"]) == 2
    assert "--patch and --policy: give one kernel" in capsys.readouterr().err


def test_cache_identity_follows_the_patch_bytes(tmp_path):
    a = (FIX / "applies.patch").read_bytes()
    b = a.replace(b"return cpu * 3 + 1;", b"return cpu * 3 + 2;")
    names = [ku.user_image_dir("/c", "6.12.118", "x86_64", "patch", "applies.patch", False,
                               kt.sha256(x), "e" * 64, "c" * 64).name for x in (a, a, b)]
    assert names[0] == names[1] != names[2]
    assert names[0] == f"6.12.118-x86_64-patch-applies-{kt.sha256(a)[:12]}-eveeeeeeee-cccccccccccc"
    assert ku.label("my fix (v2).patch") == "my_fix_v2_"


@needs_git
def test_tree_identity_follows_the_tree_and_leaves_it_alone(tmp_path):
    tree = kernel_tree(tmp_path)
    assert ku.git_identity(tree) is None
    plain = ku.content_identity(tree)
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "base"], check=True)
    index = (tree / ".git/index").stat().st_mtime_ns
    first = ku.git_identity(tree)
    assert ku.git_identity(tree) == first and ku.content_identity(tree) == plain
    x = tree / "kernel/sched/x.c"
    os.utime(x, ns=(1, 1))  # only the stat data changes: the same identity
    assert ku.git_identity(tree) == first
    x.write_text(x.read_text() + "/* edited */\n")
    edited = ku.git_identity(tree)
    assert edited["diff_sha256"] != first["diff_sha256"] and ku.content_identity(tree) != plain
    (tree / "kernel/sched/new.c").write_text("int n;\n")
    assert ku.git_identity(tree)["untracked_sha256"] != edited["untracked_sha256"]
    assert (tree / ".git/index").stat().st_mtime_ns == index  # git never refreshed it
    assert ku.tree_meta(tree, first)[0] != ku.tree_meta(tree, edited)[0]


def test_sync_tree(tmp_path):
    want, have = tmp_path / "want", tmp_path / "have"
    for d, files in ((want, {"a.c": "A2", "b.c": "B", "new.c": "N"}),
                     (have, {"a.c": "A1", "b.c": "B", "gone.c": "G"})):
        (d / "kernel/sched").mkdir(parents=True)
        for n, t in files.items():
            (d / "kernel/sched" / n).write_text(t)
    os.utime(have / "kernel/sched/b.c", ns=(5, 5))
    ku.sync_tree(want, have)
    got = {p.name: p.read_text() for p in (have / "kernel/sched").iterdir()}
    assert got == {"a.c": "A2", "b.c": "B", "new.c": "N"}
    assert (have / "kernel/sched/b.c").stat().st_mtime_ns == 5  # unchanged: make keeps it


def test_shadow_tree(tmp_path):
    tree = kernel_tree(tmp_path)
    before = ku.content_identity(tree)
    shadow = tmp_path / "shadow"
    event = {"kernel/sched/fair.c": "instrumented\n", "kernel/sched/wb_decision.h": "h\n"}
    (tree / "scripts").mkdir()
    (tree / "scripts/sched").symlink_to("../kernel/sched")  # a link to a directory
    ku.shadow_tree(tree, shadow, event)
    assert (shadow / "kernel/sched/x.c").resolve() == tree / "kernel/sched/x.c"
    assert (shadow / "scripts/sched/core.c").read_text() == (tree / "kernel/sched/core.c") \
        .read_text()
    for rel in ("kernel/sched/fair.c", "kernel/sched/wb_decision.h"):
        assert not (shadow / rel).is_symlink(), rel  # what kbuild compiles is the shadow's
    assert (shadow / "kernel/sched/fair.c").read_text() == "instrumented\n"
    (tree / "kernel/sched/x.c").unlink()
    (tree / "kernel/sched/y.c").write_text("y\n")
    ku.shadow_tree(tree, shadow, event)
    assert not (shadow / "kernel/sched/x.c").exists() and (shadow / "kernel/sched/y.c").is_symlink()
    assert sorted(p.name for p in (tree / "kernel/sched").iterdir()) == ["core.c", "fair.c", "y.c"]
    assert before != ku.content_identity(tree)  # our own edits only: the shadow wrote nothing


@needs_patch
def test_tree_sources(tmp_path):
    tree = kernel_tree(tmp_path)
    sched = tree / "kernel/sched"
    event = ku.event_patch((sched / "fair.c").read_text(), (sched / "core.c").read_text(), "t")
    files = ku.tree_sources(tree, event)
    assert sorted(files) == ["kernel/sched/" + n for n in
                             ["core.c", "fair.c"] + tracepatch.NEW_FILES]
    assert "wb_ret(WB_SIS_PREV, prev)" in files["kernel/sched/fair.c"]
    assert "wb_ret" not in (sched / "fair.c").read_text()  # the tree itself is as it was
