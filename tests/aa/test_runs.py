"""pytest tests of the run-level design of the A/A benchmark (runners/aabench/runs.py) on
constructed result sets and verdict counts; each goal also on an input that must fail it."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from runners.aabench import core, runs  # noqa: E402
from test_aabench import aa_pair, case, result_set  # noqa: E402


def test_runs_alternate_and_the_shift_follows_the_first_a_run():
    order = runs.trial_order(0, 2)
    assert order == [("a", 0), ("b", 0), ("s", 0), ("a", 1), ("b", 1), ("s", 1)]
    assert runs.run_name(3, "b", 2) == "runs3-b2.json"


def test_a_pooled_case_is_the_geometric_mean_of_its_runs_and_their_histograms_summed():
    a = [case("pipe/threads/kernel", m, {"llc": 60, "same-cpu": 40}) for m in (4000.0, 9000.0)]
    pooled = runs.pooled_case(a)
    assert pooled["status"] == "ok" and abs(pooled["rtt_ns"]["median"] - 6000.0) < 1e-6
    assert pooled["observed"]["histogram"] == {"llc": 120, "same-cpu": 80}
    # A run where the case failed makes the pooled case fail (not counted).
    assert runs.pooled_case(a + [case("pipe/threads/kernel", 1.0, status="failed")])[
        "status"] == "failed"
    # A case some run lacks is left out of the pooled set.
    docs = [result_set([case("x/y/llc", 10.0), case("x/y/same-cpu", 5.0)]),
            result_set([case("x/y/llc", 10.0)])]
    assert [c["name"] for c in runs.pooled_doc(docs)["cases"]] == ["x/y/llc"]


def test_the_shift_counts_by_what_the_runs_measured_together():
    # Run by run the same-cpu case moves +3 % and +18 % (outside the window each), together
    # about +10 %: counted. The llc case moves +10 % in one run and -20 % in the other: not.
    a = [result_set([case("p/t/same-cpu", 5000.0), case("p/t/llc", 60000.0)])] * 2
    s = [result_set([case("p/t/same-cpu", 5150.0), case("p/t/llc", 66000.0)]),
         result_set([case("p/t/same-cpu", 5900.0), case("p/t/llc", 48000.0)])]
    recs = {r["ident"]: r for r in runs.classify_runs(a, s, {})}
    assert recs["p/t/same-cpu"]["cls"] == runs.SHIFT
    assert recs["p/t/llc"]["cls"] is None
    # Contradicting input: the first run alone is outside the window.
    one = {r["ident"]: r for r in runs.classify_runs(a[:1], s[:1], {})}
    assert one["p/t/same-cpu"]["cls"] is None


def shift(n, slower, same, unknown=0):
    return {"DIFFERENT": slower, "slower": slower, "SAME": same, "UNKNOWN": unknown, "cases": n}


def test_the_shift_goal_counts_unknown_against_and_needs_forty_cases():
    assert runs.shift_runs_goal([shift(20, 19, 0, 1), shift(20, 18, 1, 1)])[1]  # 37/40, 1 SAME
    line, ok = runs.shift_runs_goal([shift(20, 17, 0, 3), shift(20, 18, 0, 2)])  # 35/40: 88 %
    assert not ok and "35/40 88%" in line and line.endswith("NOT met")
    assert runs.shift_runs_goal([shift(20, 18, 2), shift(20, 20, 0)])[1]        # 2 SAME: 5 %
    assert not runs.shift_runs_goal([shift(20, 18, 1, 1), shift(20, 18, 2)])[1]  # 3 SAME: 7.5 %
    assert not runs.shift_runs_goal([shift(39, 39, 0)])[1]                       # 39 counted
    assert not runs.shift_runs_goal([])[1]


def test_both_goals_at_one_run_count():
    clean, dirty = [aa_pair(0)] * 10, [aa_pair(0)] * 8 + [aa_pair(2)] * 2
    good_shift, few = [shift(40, 40, 0)], [shift(40, 30, 0, 10)]
    by_r = {1: {"aa": dirty, "shift": good_shift}, 2: {"aa": clean, "shift": few},
            3: {"aa": clean, "shift": good_shift}, 7: {"aa": clean, "shift": good_shift}}
    lines, ok = runs.goals_at(by_r)
    assert ok and lines[-1] == "both goals met at 3 runs a side: met"
    # Contradicting input: no run count up to 6 meets both (7 is past the goal's limit).
    del by_r[3]
    lines, ok = runs.goals_at(by_r)
    assert not ok and lines[-1].endswith("NOT met")
    table = runs.run_count_table(by_r)
    assert all(len(x) <= 100 for x in table) and len(table) == 4
    assert core.aa_goal(clean)[1] and not core.aa_goal(dirty)[1]
