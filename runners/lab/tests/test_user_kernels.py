"""A user kernel in the lab (wblab/kernel.py, matrix.py): --kernels' patch:FILE / tree:DIR, its
image resolved and held to mainline's model with its own column, and a matrix that runs it beside
mainline (fake guests and a stand-in wakebench, as test_matrix_runs.py)."""
import hashlib
import json

import pytest

import wblab.matrix
from wblab import LabError
from wblab.kernel import is_user, resolve_kernel, resolve_user, user_kernel
from wblab.matrix import main, parse_kernels

from test_matrix_run import FAR, NEAR, result_set, write
from test_matrix_runs import lab  # noqa: F401 (the fixture)


def user_image(tmp_path, kind="patch", **meta):
    img = tmp_path / "bzImage"
    img.write_bytes(b"MZ")
    (tmp_path / "meta.json").write_text(json.dumps(dict({
        "policy": kind, "arch": "x86_64", "source_version": "6.12.118", "patch_file": "p.patch",
        "patch_sha256": "ab" * 32, "event_sha256": "cd" * 32}, **meta)))
    return img


def test_kernels_name_a_patch_or_a_tree(tmp_path):
    patch = tmp_path / "smt-first.patch"
    patch.write_text("x")
    assert user_kernel(f"patch:{patch}") == ("patch:smt-first", "patch", patch)
    assert user_kernel(f"tree:{tmp_path}") == (f"tree:{tmp_path.name}", "tree", tmp_path)
    assert user_kernel("sync-pair") is None and user_kernel("gated:x") is None
    with pytest.raises(LabError, match="--kernels patch:nope.patch: nope.patch is not a file"):
        user_kernel("patch:nope.patch")
    with pytest.raises(LabError, match="is not a directory"):
        user_kernel(f"tree:{patch}")
    assert parse_kernels(f"mainline,patch:{patch}") == (
        ["mainline", "patch:smt-first"], {"patch:smt-first": ("patch", patch)})
    with pytest.raises(LabError, match="--kernels: patch:smt-first twice"):
        parse_kernels(f"patch:{patch},patch:{patch}")
    with pytest.raises(LabError, match="unknown kernel patchy.*or patch:FILE, tree:DIR"):
        parse_kernels("mainline,patchy")
    assert is_user("patch:smt-first") and is_user("tree:linux") and not is_user("gated:mainline")


def test_a_user_image_is_held_to_mainline(tmp_path):
    img = user_image(tmp_path)
    _, policy, info = resolve_kernel(str(img), None)
    assert policy == info["policy"] == "mainline" and info["kernel"] == "patch"
    assert info["patch_file"] == "p.patch" and info["event_sha256"] == "cd" * 32
    assert "which no model knows" in info["note"]
    with pytest.raises(LabError, match="runs policy mainline .* not --policy sync-core"):
        resolve_kernel(str(img), "sync-core")
    # In a matrix its lab_kernel names its column, so its cells are told from mainline's.
    asked = []
    image, policy, info = resolve_user("patch:p", "patch", "/x/p.patch",
                                       build=lambda *a: asked.append(a) or img)
    assert asked == [("patch", "/x/p.patch", "x86_64")] and image == img
    assert (policy, info["policy"], info["model"]) == ("mainline", "patch:p", "mainline")
    with pytest.raises(LabError, match="its meta.json is not a tree kernel's"):
        resolve_user("tree:l", "tree", "/l", build=lambda *a: img)
    (tmp_path / "meta.json").write_text(json.dumps({"policy": "sync-pair"}))
    with pytest.raises(LabError, match="its meta.json is not a patch kernel's"):
        resolve_user("patch:p", "patch", "/x/p.patch", build=lambda *a: img)


def test_a_matrix_runs_a_patched_kernel_beside_mainline(lab, tmp_path, monkeypatch):
    patch = tmp_path / "smt-first.patch"
    patch.write_text("x")
    sha = hashlib.sha256(lab["cases"].read_bytes()).hexdigest()
    resolved = []

    def boot(plan):  # the patched kernel's guest stacks the pair (FAR), mainline's does not
        lab["booted"].append(str(plan.out.relative_to(lab["out"])))
        ran = plan.lab_kernel["policy"]
        write(plan.out / "results.json", dict(result_set(
            sha, lambda i: NEAR if ran == "mainline" else FAR, ran)))
        write(plan.out / "topology.json", {"classes": [
            {"class": c} for c in ("same-cpu", "smt-sibling", "llc")]})
        return {}, []
    monkeypatch.setattr(wblab.matrix, "run_guest", boot)
    monkeypatch.setattr(wblab.matrix, "resolve_user", lambda column, kind, path, arch: (
        resolved.append((column, kind, path, arch)) or
        ("/k/p/bzImage", "mainline", {"policy": column, "model": "mainline"})))
    argv = ["--presets", "smt2", "--kernels", f"mainline,patch:{patch}", "--runs", "2",
            "--out", str(lab["out"]), "--wakebench", str(lab["wb"]), "--cases", str(lab["cases"])]
    assert main(argv) == 0
    assert lab["booted"] == ["smt2/mainline", "smt2/patch:smt-first", "smt2/mainline/run2",
                             "smt2/patch:smt-first/run2"]
    assert resolved[0] == ("patch:smt-first", "patch", patch, "x86_64")
    m = json.loads((lab["out"] / "matrix.json").read_text())
    assert m["kernels"] == ["mainline", "patch:smt-first"]
    # Held to mainline's model, it moved the pair where mainline's did not: a shift no model
    # predicted (mainline's own cell has none), and compare judged it against mainline's runs.
    rows = m["cells"]["smt2"]["patch:smt-first"]["rows"]
    assert {r["shift"] for r in rows.values()} == {"unpredicted"}
    assert {r["central_shift"] for r in rows.values()} == {0.0}
    assert all("shift" not in r for r in m["cells"]["smt2"]["mainline"]["rows"].values())
    argv = json.loads((lab["wb"].parent / "compare-argv.json").read_text())
    assert argv[argv.index("--") + 1].endswith("smt2/patch:smt-first/results.json")
    text = (lab["out"] / "matrix.md").read_text()
    assert "A/B over runs: patch:smt-first against mainline, 2 runs each" in text


def test_one_guest_takes_one_kernel(tmp_path, monkeypatch):
    import types
    import wblab.cli
    img = user_image(tmp_path, kind="tree", patch_file=None, tree="/src/linux")
    built = []
    monkeypatch.setattr(wblab.cli, "build_user_kernel",
                        lambda kind, path, arch: built.append((kind, str(path), arch)) or img)
    args = types.SimpleNamespace(patch=None, kernel_tree="/src/linux", kernel=None, policy=None,
                                 lockdep=False)
    image, policy, info = wblab.cli.chosen_kernel(args, "x86_64")
    assert built == [("tree", "/src/linux", "x86_64")] and image == img
    assert policy == "mainline" and info["kernel"] == "tree" and info["tree"] == "/src/linux"
    args.kernel = str(img)
    with pytest.raises(LabError, match="--kernel-tree and --kernel: give one kernel"):
        wblab.cli.chosen_kernel(args, "x86_64")
