"""registry/registry.json is the lab's only list of policies and mechanisms: kernelbuild.py
(kerneltree.py), kernel.py, agreement.py and matrix.py derive theirs from it, and a policy or
patch added in one place only fails here (tests/registry_test.cpp holds the C++ side)."""
import json
import re
import sys
from pathlib import Path

from wblab import REPO, agreement, kernel, matrix, registry

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kernelbuild as kb  # noqa: E402
import kerneltree as kt  # noqa: E402

FILE = json.loads((REPO / "registry" / "registry.json").read_text())


def test_the_file_is_the_one_read():
    assert registry.FILE == REPO / "registry" / "registry.json"
    assert registry.REGISTRY == FILE


def test_kernel_builds_cover_every_policy_once():
    ids = [p["id"] for p in FILE["policies"]]
    assert sorted([*kb.POLICIES, *kb.ALIASES]) == sorted(ids)
    assert set(kb.ALIASES.values()) <= set(kb.POLICIES)
    assert kernel.KERNEL_POLICIES == tuple(i for i in ids if i in kb.POLICIES)


def test_every_patch_file_belongs_to_one_policy():
    named = sorted(p for p in kb.POLICIES.values() if p)
    assert sorted(p.name for p in kt.PATCHES.glob("*.patch")) == named


def test_the_matrix_runs_every_blocking_mechanism_kernel_placed():
    run = re.compile(matrix.RUN_FILTER)
    for m in FILE["mechanisms"]:
        blocks = "no_kernel_wakeup" not in m
        assert bool(run.search(f"{m['id']}/threads/kernel")) == blocks, m["id"]
        assert not run.search(f"{m['id']}/threads/llc")
        assert (m["id"] in agreement.NO_WAKEUP) != blocks
