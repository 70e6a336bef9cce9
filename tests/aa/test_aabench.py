"""pytest tests of the power benchmark's pure functions (runners/aabench/core.py, shifts.py), on
constructed compare JSON and result sets."""

import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from runners.aabench import core, shifts  # noqa: E402
from runners.aabench.core import InputError  # noqa: E402

IDENTS = ["pipe/threads/kernel", "eventfd/threads/kernel", "pipe/processes/llc",
          "futex/threads/llc", "unix-stream/threads/llc", "pipe/threads/same-cpu",
          "pipe/processes/same-cpu", "eventfd/threads/same-cpu"]


def row(ident, verdict, change=0.0, work=0):
    mech, mode, placement = ident.split("/")
    params = {"payload": 1, "work_ns": work}
    cells = [{"status": "ok", "verdict": None, "change_pct": None},
             {"status": "ok", "verdict": verdict, "change_pct": change}]
    return {"mechanism": mech, "mode": mode, "placement": placement, "pair": "",
            "key": f"{ident} {json.dumps(params)}", "params": params, "cells": cells}


def compare_doc(verdicts, changes=None):
    rows = [row(i, v, (changes or {}).get(i, 0.0)) for i, v in zip(IDENTS, verdicts)]
    return {"schema": "wakebench-compare", "schema_version": 2, "margin": 0.05, "rows": rows,
            "summary": []}


def test_count_verdicts_and_untested_rows():
    doc = compare_doc(["DIFFERENT", "DIFFERENT", "SAME", "UNKNOWN", None, "SAME", "SAME", "SAME"],
                      {"pipe/threads/kernel": -8.0, "eventfd/threads/kernel": +9.0})
    n = core.count(core.case_verdicts(doc))
    assert n == {"DIFFERENT": 2, "slower": 1, "SAME": 4, "UNKNOWN": 1, "cases": 7}
    n = core.count(core.case_verdicts(doc), {"pipe/threads/kernel", "futex/threads/llc"})
    assert n == {"DIFFERENT": 1, "slower": 1, "SAME": 0, "UNKNOWN": 1, "cases": 2}


def test_compare_of_another_schema_is_one_line_error():
    old = {"schema": "wakebench-compare", "schema_version": 1, "rows": []}
    with pytest.raises(InputError, match="schema_version 1, this benchmark reads 2"):
        core.case_verdicts(old)
    with pytest.raises(InputError, match="not a wakebench-compare document"):
        core.case_verdicts({"schema": "wakebench-results", "cases": []})


def test_a_result_set_is_read_by_the_labs_reader(tmp_path):
    base = os.path.join(ROOT, "tests/fixtures/results/base.json")
    assert [c["name"] for c in core.load_set(base)["cases"]][0] == "pipe/processes/same-cpu"
    (tmp_path / "a.json").write_text(json.dumps(compare_doc(["SAME"] * 8)))
    with pytest.raises(InputError, match="a.json: not a wakebench result set"):
        core.load_set(str(tmp_path / "a.json"))
    doc = json.loads(open(base).read())
    doc["cases"][0]["name"] = "pipe/processes/same-cpu\tinjected"
    (tmp_path / "tab.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r'tab.json: cases\[0\].name "pipe/processes/same-cpu\\t'):
        core.load_set(str(tmp_path / "tab.json"))


def test_missing_file_is_one_line_error(tmp_path):
    with pytest.raises(InputError) as e:
        core.load_json(str(tmp_path / "nope.json"), "config")
    assert str(e.value) == (f"{tmp_path / 'nope.json'}: not a readable config (cannot open: No "
                            "such file or directory)")


def aa_pair(n_different):
    v = ["DIFFERENT"] * n_different + ["SAME"] * (8 - n_different)
    return core.count(core.case_verdicts(compare_doc(v)))


def test_aa_goal_one_different_passes_two_fail():
    line, ok = core.aa_goal([aa_pair(1)])
    assert ok and "1 of 1 pairs" in line and line.endswith(": met")
    line, ok = core.aa_goal([aa_pair(2)])
    assert not ok and line.endswith("NOT met")
    # 9 of 10 clean pairs meet the goal, 8 of 10 do not; no pair at all never does.
    assert core.aa_goal([aa_pair(0)] * 9 + [aa_pair(3)])[1]
    assert not core.aa_goal([aa_pair(0)] * 8 + [aa_pair(2)] * 2)[1]
    assert not core.aa_goal([])[1]


def test_aa_same_goal():
    assert core.aa_same_goal([aa_pair(1)])[1]            # 7 of 8 SAME: 88 %
    assert not core.aa_same_goal([aa_pair(2)])[1]        # 6 of 8: 75 %
    assert not core.aa_same_goal([])[1]


def shift_counts(n_same, n):
    return {"DIFFERENT": n - n_same, "slower": n - n_same, "SAME": n_same, "UNKNOWN": 0,
            "cases": n}


def test_shift_goal_fails_with_six_percent_same():
    line, ok = core.shift_same_goal([shift_counts(3, 50)])   # 6 %
    assert not ok and "3/50 6%" in line and line.endswith("NOT met")
    assert core.shift_same_goal([shift_counts(2, 50)])[1]     # 4 %
    assert core.shift_same_goal([shift_counts(0, 8)])[1]
    assert not core.shift_same_goal([shift_counts(1, 8)])[1]  # one SAME of 8 is 12 %
    assert not core.shift_same_goal([])[1]


def test_shift_decided_goal_needs_slower_different_within_time():
    fast = {"verdict": "DIFFERENT", "change_pct": -10.0, "decided_s": 120}
    assert core.shift_decided_goal([fast] * 10)[1]
    assert core.shift_decided_goal([fast] * 9 + [dict(fast, verdict="UNKNOWN")])[1]
    assert not core.shift_decided_goal([fast] * 8 + [dict(fast, decided_s=301)] * 2)[1]
    assert not core.shift_decided_goal([fast] * 8 + [dict(fast, change_pct=+10.0)] * 2)[1]
    assert not core.shift_decided_goal([])[1]


def test_until_decided_verdicts_and_look_times():
    key = 'pipe/threads/llc {"work_ns":0}'
    doc = {"until_decided": {"looks": 3, "elapsed_s": 190.0, "counts": {},
                             "cases": {key: {"verdict": "SAME", "look": 2, "repetitions": 100,
                                             "change_pct": 1.0, "why": None}}}}
    v = core.until_decided_verdicts(doc)
    assert v == {"pipe/threads/llc": {"verdict": "SAME", "change_pct": 1.0, "look": 2,
                                      "repetitions": 100}}
    with pytest.raises(InputError, match="no until_decided"):
        core.until_decided_verdicts({"cases": []}, "x.json")
    log = ("wakebench: look 1 of 10 (level 0.0100): 0 DIFFERENT, 5 SAME, 3 UNKNOWN; 3 case(s) go "
           "on; 1:05 of 5:00 spent\nwakebench: look 2 of 10 (level 0.0090): 1 DIFFERENT, 6 SAME,"
           " 1 UNKNOWN; 1 case(s) go on; 2:10 of 5:00 spent\n")
    assert core.look_times(log) == {1: 65, 2: 130}
    good = {"until_decided": {"counts": {"SAME": 1, "DIFFERENT": 0, "UNKNOWN": 0}}}
    assert core.counts_mismatch(good, v) == ""
    bad = {"until_decided": {"counts": {"SAME": 0, "DIFFERENT": 1, "UNKNOWN": 0}}}
    assert core.counts_mismatch(bad, v) == ("until_decided counts differ from its cases: "
                                            "DIFFERENT 1 vs 0, SAME 0 vs 1")
    assert core.decide_times([{"decided_s": 65}, {"decided_s": None}, {"decided_s": 130}]) == (
        "2 decided after median 98 s, max 130 s")
    assert core.decide_times([]) == "none decided"


def test_with_repetitions_replaces_the_run_args_count():
    args = ["--round-trips", "1000", "--benchmark_repetitions", "5", "--benchmark_repetitions=7"]
    assert core.with_repetitions(args, 150) == ["--round-trips", "1000",
                                                "--benchmark_repetitions", "150"]
    assert core.with_repetitions(args, None) == args


# --- shifts ---------------------------------------------------------------------------------

def case(ident, median, hist=None, status="ok", work=0):
    c = {"name": ident + (f"/work={work}ns" if work else ""), "status": status,
         "params": {"payload": 1, "work_ns": work}, "rtt_ns": {"median": median}}
    if hist is not None:
        c["observed"] = {"histogram": hist}
    return c


def result_set(cases, read_ns=10.0):
    return {"schema": "wakebench-results", "environment": {"timer": {"read_ns": read_ns}},
            "cases": cases, "benchmarks": [{"name": c["name"], "run_name": c["name"]}
                                           for c in cases]}


def test_work_ns_rule_on_a_constructed_case():
    # A 60 us round trip: 10 % is 6000 ns, less one 10 ns timer read, over two sides' work.
    assert shifts.work_ns_for(60000, 0.10, 10.0) == 2995
    assert shifts.work_ns_for(60000, 0.05, 10.0) == 1495
    assert shifts.work_ns_for(5000, 0.05) == 125
    assert shifts.work_ns_for(10, 0.05, 10.0) == 1  # never 0 (0 would be no work at all)
    a = result_set([case("pipe/threads/same-cpu", 5000.0), case("futex/threads/llc", 60000.0),
                    case("pipe/processes/llc", 1.0, status="failed")])
    plan = shifts.work_plan(a)
    assert plan[0.10] == {"pipe/threads/same-cpu": 245, "futex/threads/llc": 2995}
    assert plan[0.05]["pipe/threads/same-cpu"] == 120


def test_shift_config_sets_each_case_its_work_and_refuses_sweeps():
    cfg = {"schema_version": 1, "name": "power", "cases": [
        {"mechanisms": ["pipe"], "modes": ["threads"], "placements": ["same-cpu"]},
        {"mechanisms": ["futex"], "modes": ["threads"], "placements": ["llc"]}]}
    out = shifts.shift_config(cfg, {"pipe/threads/same-cpu": 245}, "shift10")
    assert out["name"] == "power-shift10"
    assert out["cases"] == [{"mechanisms": ["pipe"], "modes": ["threads"],
                             "placements": ["same-cpu"], "params": {"work_ns": [245]}}]
    assert "params" not in cfg["cases"][0]  # the input is untouched
    cfg["cases"][0]["modes"] = ["threads", "processes"]
    with pytest.raises(InputError, match="one mechanism, mode and placement"):
        shifts.shift_config(cfg, {"pipe/threads/same-cpu": 245}, "shift10")


def test_with_work_relabels_only():
    b = result_set([case("futex/threads/llc", 66000.0, work=2995)])
    out = shifts.with_work(b, {})
    assert out["cases"][0]["name"] == "futex/threads/llc"
    assert out["cases"][0]["params"]["work_ns"] == 0
    assert out["cases"][0]["rtt_ns"]["median"] == 66000.0
    assert out["benchmarks"][0]["name"] == "futex/threads/llc"
    assert b["cases"][0]["name"] == "futex/threads/llc/work=2995ns"  # the input is untouched
    back = shifts.with_work(out, {"futex/threads/llc": 2995})
    assert back["cases"][0]["name"] == "futex/threads/llc/work=2995ns"
    assert back["cases"][0]["params"]["work_ns"] == 2995


def test_measured_shift_windows():
    assert shifts.shift_class(0.10) == 0.10 and shifts.shift_class(0.08) == 0.10
    assert shifts.shift_class(0.12) == 0.10 and shifts.shift_class(0.05) == 0.05
    assert shifts.shift_class(0.07) is None and shifts.shift_class(0.13) is None
    assert shifts.shift_class(0.03) is None and shifts.shift_class(None) is None


def test_a_seven_percent_shift_is_excluded_from_both_classes():
    a = result_set([case("futex/threads/llc", 60000.0), case("pipe/threads/same-cpu", 5000.0)])
    b = result_set([case("futex/threads/llc", 64200.0, work=2995),    # +7 %
                    case("pipe/threads/same-cpu", 5500.0, work=245)])  # +10 %
    recs = {r["ident"]: r for r in shifts.classify(a, b, 0.10)}
    r = recs["futex/threads/llc"]
    assert r["cls"] is None and r["why"] == "outside 4-6/8-12%"
    assert abs(r["measured"] - 0.07) < 1e-9
    assert recs["pipe/threads/same-cpu"]["cls"] == 0.10
    assert shifts.excluded_counts(recs.values()) == {"shares moved": 0, "outside windows": 1,
                                                     "failed": 0}
    # Counted in neither class: the 10 % goal sees only the same-cpu case.
    cmp = compare_doc(["SAME"] * 8)
    counted = {i for i, x in recs.items() if x["cls"] == 0.10}
    assert core.count(core.case_verdicts(cmp), counted)["cases"] == 1
    assert not any(x["cls"] == 0.05 for x in recs.values())
    assert abs(shifts.rule_check(list(recs.values())) - 0.85) < 1e-9  # (0.07 + 0.10) / 2 / 0.10


def test_a_kernel_case_whose_shares_moved_is_excluded():
    hist_a = {"same-cpu": 700, "llc": 300}
    a = result_set([case("pipe/threads/kernel", 6000.0, hist_a),
                    case("eventfd/threads/kernel", 15000.0, hist_a)])
    b = result_set([case("pipe/threads/kernel", 6600.0, {"same-cpu": 600, "llc": 400}, work=295),
                    case("eventfd/threads/kernel", 16500.0, {"same-cpu": 680, "llc": 320},
                         work=745)])
    recs = {r["ident"]: r for r in shifts.classify(a, b, 0.10)}
    moved = recs["pipe/threads/kernel"]
    assert abs(moved["moved_pts"] - 10.0) < 1e-9
    assert moved["cls"] is None and "shares moved 10 pts" in moved["why"]
    kept = recs["eventfd/threads/kernel"]  # moved 2 pts: counted
    assert kept["cls"] == 0.10 and abs(kept["moved_pts"] - 2.0) < 1e-9
    assert shifts.excluded_counts(recs.values())["shares moved"] == 1
    assert shifts.share_move_pts(case("x/y/llc", 1.0), case("x/y/llc", 1.0)) is None


def test_tables_fit_in_100_columns():
    a = result_set([case("unix-stream/processes/same-cpu", 5000.0)])
    b = result_set([case("unix-stream/processes/same-cpu", 5800.0, work=245)])
    recs = shifts.classify(a, b, 0.10)
    lines = shifts.shift_table(recs, {"unix-stream/processes/same-cpu": {"verdict": "UNKNOWN"}})
    lines += core.pair_table([aa_pair(1)] * 10)
    recs += shifts.classify(result_set([case("pipe/threads/kernel", 6000.0, {"llc": 1})]),
                            result_set([case("pipe/threads/kernel", 1.0, {"same-cpu": 1})]), 0.10)
    lines += shifts.shift_table(recs, {})
    assert all(len(x) <= 100 for x in lines)
    assert "outside 4-6/8-12%" in lines[1] and "class shares moved 100 pts" in lines[-1]
