"""`matrix --runs K` with fake guests (run_guest replaced, as in test_matrix_run.py) and a stand-in
wakebench whose `compare` logs the command it was given: the guests alternate A, B, A, B, the
A/B verdict is compare's over the A runs before `--` and the B runs after, a side short of runs
is said and not judged, and the progress counts every guest."""
import hashlib
import json

import pytest

import wblab.matrix
from wblab import LabError
from wblab.matrix import main
from wblab.matrix_runs import check_runs, guest_order, read_compare

from test_matrix_run import FAKE, GROUPS, FAR, NEAR, result_set, write

# compare of the stand-in: the command into compare-argv.json beside it, every side's set read;
# at the run level the first case DIFFERENT and 10% slower, the second and third UNKNOWN (with and
# without a count that decides), the others SAME. Its rows read as compare's do for the lab's
# searched cases: the same mechanism/mode/placement, parameters differing in their start alone.
COMPARE = r'''
if sys.argv[1] == "compare":
    import os
    open(os.path.join(os.path.dirname(sys.argv[0]), "compare-argv.json"), "w").write(
        json.dumps(sys.argv[1:]))
    args = sys.argv[4:]
    a, b = args[:args.index("--")], args[args.index("--") + 1:]
    sets = [json.load(open(f)) for f in a + b]
    rows = []
    for i, c in enumerate(sets[0]["cases"]):
        cell = {"runs": len(b), "verdict": ["DIFFERENT", "UNKNOWN", "UNKNOWN"][i] if i < 3
                else "SAME", "change_pct": -10.0 if i == 0 else 0.5, "level": "runs",
                "needed": 6 if i == 1 else None, "needed_repetitions_per_run": 5 if i == 1
                else None, "needed_for": "DIFFERENT" if i == 1 else None}
        params = {"start": [0, i], "work_ns": 200000}
        rows.append({"key": f"{c['mechanism']}/{c['mode']}/kernel " + json.dumps(params),
                     "params": params, "cells": [{"runs": len(a)}, cell]})
    print(json.dumps({"schema": "wakebench-compare", "schema_version": 2, "rows": rows,
                      "summary": [{"set": "B", "DIFFERENT": 1, "slower": 1,
                                   "SAME": len(rows) - 3, "UNKNOWN": 2}],
                      "warnings": ["a note of compare's"]}))
    sys.exit(0)
'''


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A stand-in wakebench, a cases file, and fake guests: each writes its kernel's result set
    unless `lab["fail"]` names its folder; `lab["booted"]` lists the folders in boot order."""
    wb = tmp_path / "wakebench"
    wb.write_text(FAKE.replace("GROUPS_JSON", json.dumps(GROUPS))
                  .replace("import json, sys\n", "import json, sys\n" + COMPARE))
    wb.chmod(0o755)
    cases = tmp_path / "mine.json"
    cases.write_text(json.dumps({"cases": [{"mechanisms": ["pipe"], "modes": ["threads"],
                                            "placements": ["kernel"]}]}))
    sha = hashlib.sha256(cases.read_bytes()).hexdigest()
    state = {"booted": [], "fail": None, "out": tmp_path / "m", "wb": wb, "cases": cases}

    def boot(plan):
        state["booted"].append(str(plan.out.relative_to(state["out"])))
        if str(plan.out) == state["fail"]:
            problems = ["the guest did not finish its job (timed out after 100 s)"]
            write(plan.out / "lab-summary.json", {"problems": problems})
            return {}, problems
        doc = result_set(sha, lambda i: NEAR if plan.policy == "mainline" else FAR,
                         plan.policy)
        doc["environment"]["emulated"] = True
        write(plan.out / "results.json", doc)
        write(plan.out / "topology.json", {"classes": [
            {"class": c} for c in ("same-cpu", "smt-sibling", "llc")]})
        return {}, []
    monkeypatch.setattr(wblab.matrix, "run_guest", boot)
    monkeypatch.setattr(wblab.matrix, "resolve_kernel", lambda image, policy, arch: (
        f"/k/{policy}/bzImage", policy, {"policy": policy}))
    return state


def matrix(lab, *extra):
    argv = ["--presets", "smt2", "--kernels", "mainline,sync-pair", "--runs", "3",
            "--out", str(lab["out"]), "--wakebench", str(lab["wb"]),
            "--cases", str(lab["cases"]), *extra]
    return main(argv)


def test_two_kernels_alternate_and_compare_judges_their_runs(lab, capsys):
    assert matrix(lab) == 0
    assert lab["booted"] == ["smt2/mainline", "smt2/sync-pair", "smt2/mainline/run2",
                             "smt2/sync-pair/run2", "smt2/mainline/run3", "smt2/sync-pair/run3"]
    out = lab["out"]
    sides = [[str(out / f"smt2/{k}/{r}results.json") for r in ("", "run2/", "run3/")]
             for k in ("mainline", "sync-pair")]
    argv = ["compare", "--format", "json", *sides[0], "--", *sides[1]]
    assert json.loads((lab["wb"].parent / "compare-argv.json").read_text()) == argv
    m = json.loads((out / "matrix.json").read_text())
    runs = m["runs"]["smt2"]
    assert runs["command"] == [str(lab["wb"])] + argv
    assert runs["counts"] == {"DIFFERENT": 1, "slower": 1, "SAME": 3, "UNKNOWN": 2}
    assert runs["came_back"] == [3, 3]
    text = (out / "matrix.md").read_text()
    assert "#### A/B over runs: sync-pair against mainline, 3 runs each, alternated" in text
    assert "on the median RTT (EMULATED (TCG) timings: not comparable" in " ".join(text.split())
    assert "- smt2: 1 DIFFERENT (1 slower), 3 SAME, 2 UNKNOWN\n" in text
    assert "  - pipe/threads/kernel/start=0,0: DIFFERENT -10.0% (level runs, 3 vs 3 runs)\n" \
        in text
    assert "  - pipe/threads/kernel/start=0,1: UNKNOWN +0.5% (level runs, 3 vs 3 runs); 6 runs " \
        "a side of 5\n    repetitions would show DIFFERENT\n" in text
    assert "  - pipe/threads/kernel/start=0,2: UNKNOWN +0.5% (level runs, 3 vs 3 runs); no count " \
        "decides it\n" in text
    assert "  - compare: a note of compare's\n" in text
    assert json.loads((out / "smt2/compare-runs.json").read_text())["summary"][0]["SAME"] == 3
    # the tables hold the first runs: both kernels' cells judged
    assert "rows" in m["cells"]["smt2"]["mainline"] and "rows" in m["cells"]["smt2"]["sync-pair"]
    err = capsys.readouterr().err
    steps = [x for x in err.splitlines() if x.startswith("[")]
    assert [x.split()[0] for x in steps] == [f"[{i}/6]" for i in range(1, 7)]
    assert steps[1].startswith("[2/6] smt2 x sync-pair run 1/3") and " ok in 0:0" in steps[1]
    assert "ETA" in steps[0] and "ETA" not in steps[5]
    # the guests' own lines went to their folders
    assert "agreement" in (out / "smt2/mainline/lab.log").read_text()


def test_a_side_short_of_runs_is_said_and_not_judged(lab, capsys):
    lab["fail"] = str(lab["out"] / "smt2/sync-pair/run3")
    assert matrix(lab) == 1
    assert not (lab["wb"].parent / "compare-argv.json").exists()  # compare never asked
    m = json.loads((lab["out"] / "matrix.json").read_text())
    assert m["runs"]["smt2"]["came_back"] == [3, 2]
    assert m["runs"]["smt2"]["missing"] == (
        "sync-pair has 2 of the 3 runs asked for (run 3: the guest did not finish its job "
        "(timed out after 100 s)): not judged")
    text = (lab["out"] / "matrix.md").read_text()
    assert "- smt2: NOT JUDGED: sync-pair has 2 of the 3 runs asked for" in text
    err = capsys.readouterr().err
    assert "[6/6] smt2 x sync-pair run 3/3" in err and "PROBLEM: the guest did not finish" in err
    assert "A/B verdict was not given on smt2" in err
    # the missing run booted again: judged, and an earlier verdict's file is not left behind
    lab["fail"] = None
    assert matrix(lab) == 0
    assert lab["booted"][-1] == "smt2/sync-pair/run3" and len(lab["booted"]) == 7
    assert (lab["out"] / "smt2/compare-runs.json").is_file()
    lab["fail"] = str(lab["out"] / "smt2/mainline/run2")
    assert matrix(lab, "--rerun") == 1
    assert not (lab["out"] / "smt2/compare-runs.json").exists()


def test_a_run_of_another_config_does_not_count(lab):
    assert matrix(lab) == 0
    other = lab["out"] / "smt2/mainline/run2/results.json"
    doc = json.loads(other.read_text())
    doc["environment"]["config_hash"] = "sha256:" + "0" * 64
    other.write_text(json.dumps(doc))
    assert matrix(lab, "--no-run") == 1
    missing = json.loads((lab["out"] / "matrix.json").read_text())["runs"]["smt2"]["missing"]
    assert missing.startswith("mainline has 2 of the 3 runs asked for (run 2: ") and \
        "ran another config (sha256 0000000000000000)" in missing


def test_the_order_of_the_guests():
    assert guest_order(["a", "b"], ["p", "q"], 1) == [("p", "a", 1), ("q", "a", 1),
                                                       ("p", "b", 1), ("q", "b", 1)]
    assert guest_order(["a", "b"], ["p", "q"], 2) == [
        ("p", "a", 1), ("p", "b", 1), ("p", "a", 2), ("p", "b", 2),
        ("q", "a", 1), ("q", "b", 1), ("q", "a", 2), ("q", "b", 2)]


@pytest.mark.parametrize("runs, kernels, message", [
    (0, ["mainline", "sync-pair"], "--runs: 0 is not a positive count"),
    (3, ["mainline", "sync-pair", "sync-core"], "alternates the guests of two kernels"),
    (3, ["mainline", "mainline"], "alternates the guests of two kernels"),
    (2, ["mainline", "gated"], "gated switches its settings inside one guest"),
])
def test_runs_are_refused_in_one_line(runs, kernels, message):
    with pytest.raises(LabError, match=message):
        check_runs(runs, kernels)
    check_runs(1, kernels)  # one run: any kernels, as before


def test_what_is_not_compares_json_is_refused():
    with pytest.raises(LabError, match="x: not wakebench compare's JSON"):
        read_compare({"schema": "wakebench-compare", "schema_version": 1, "rows": []}, "x")
