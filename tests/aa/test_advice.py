"""pytest tests of the advice mode's pure parts (runners/aabench/advice.py): which cases it extends
and by how many runs, from compare's JSON; how the budget cuts that and says so; how the outcome
counts; each goal on inputs that pass it and inputs that must fail it."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from runners.aabench import advice, core  # noqa: E402


def row(ident, verdict, needed=None, per_run=None, aim=None, change=0.0):
    mech, mode, placement = ident.split("/")
    cell = {"verdict": verdict, "change_pct": change, "needed": needed, "needed_for": aim,
            "needed_base": None, "needed_repetitions_per_run": per_run, "level": "runs"}
    return {"mechanism": mech, "mode": mode, "placement": placement, "pair": "",
            "key": f"{ident} {{}}", "cells": [{"verdict": None}, cell]}


def compare_doc(rows):
    return {"schema": "wakebench-compare", "schema_version": 2, "rows": rows, "summary": []}


def test_the_unknown_cases_and_their_advice_come_from_compares_json():
    doc = compare_doc([row("pipe/threads/same-cpu", "UNKNOWN", 9, 14, "DIFFERENT", -6.0),
                       row("pipe/processes/llc", "UNKNOWN"),             # no run count decides
                       row("futex/threads/llc", "UNKNOWN", 4, 10, "SAME"),  # below the runs
                       row("eventfd/threads/llc", "DIFFERENT", change=-12.0),
                       row("pipe/threads/llc", "SAME"),
                       row("unix-stream/threads/llc", None)])            # not tested
    c = {x["ident"]: x for x in advice.candidates(2, "shift", core.case_verdicts(doc), 6)}
    assert sorted(c) == ["futex/threads/llc", "pipe/processes/llc", "pipe/threads/same-cpu"]
    same_cpu = c["pipe/threads/same-cpu"]
    assert (same_cpu["trial"], same_cpu["kind"], same_cpu["at"]) == (2, "shift", 6)
    assert (same_cpu["advised"], same_cpu["runs"], same_cpu["per_run"], same_cpu["for"]) == \
        (9, 9, 14, "DIFFERENT")
    assert c["pipe/processes/llc"]["runs"] is None
    # Advice of fewer runs than present: followed at the runs present (no more to run).
    assert (c["futex/threads/llc"]["advised"], c["futex/threads/llc"]["runs"]) == (4, 6)
    assert all(x["first"] == 0 for x in c.values())
    # Only the counted idents of a shift comparison.
    only = advice.candidates(0, "shift", core.case_verdicts(doc), 6, {"pipe/processes/llc"})
    assert [x["ident"] for x in only] == ["pipe/processes/llc"]


def test_advice_of_longer_runs_than_the_first_is_followed_on_new_runs_only():
    doc = compare_doc([row("pipe/threads/kernel", "UNKNOWN", 4, 88, "DIFFERENT"),
                       row("pipe/threads/same-cpu", "UNKNOWN", 9, 10, "SAME"),
                       row("eventfd/threads/kernel", "UNKNOWN", 3, 200, "SAME")])
    c = {x["ident"]: x for x in advice.candidates(0, "aa", core.case_verdicts(doc), 6, reps=10)}
    # 4 runs of 88 repetitions: runs 6-9, after the first six of 10 repetitions.
    assert (c["pipe/threads/kernel"]["first"], c["pipe/threads/kernel"]["runs"]) == (6, 4)
    assert advice.upto(c["pipe/threads/kernel"]) == 10
    # The first runs have the advised 10: runs 0-8, three new.
    assert (c["pipe/threads/same-cpu"]["first"], c["pipe/threads/same-cpu"]["runs"]) == (0, 9)
    # Fewer runs than present, but longer ones: three new runs all the same.
    assert advice.upto(c["eventfd/threads/kernel"]) == 9
    tg = advice.targets(list(c.values()), 6)
    assert tg[0] == {"runs": {"a": 10, "b": 10, "s": 6}, "reps": 200}


def cand(trial, kind, runs, per_run=None, ident="p/t/llc", aim="DIFFERENT", at=6, fresh=False):
    return {"trial": trial, "kind": kind, "ident": ident, "at": at, "change_pct": -3.0,
            "advised": runs, "runs": (runs if fresh else max(runs, at)) if runs else None,
            "per_run": per_run, "for": aim, "first": at if fresh else 0}


ONE_A_RUN = (lambda reps: 1)
CANDS = [cand(0, "aa", 8, 10), cand(0, "shift", 8, 12), cand(1, "aa", 12, 10),
         cand(1, "shift", 30, 10), cand(1, "shift", None, ident="p/t/same-cpu")]


def test_the_streams_grow_to_the_largest_advice_they_serve():
    tg = advice.targets(CANDS[:3], 6)
    assert tg[0] == {"runs": {"a": 8, "b": 8, "s": 8}, "reps": 12}
    assert tg[1] == {"runs": {"a": 12, "b": 12, "s": 6}, "reps": 10}
    # A shared A stream is paid once: 2 + 2 + 2 in trial 0, 6 + 6 in trial 1.
    assert advice.cost(tg, 6, ONE_A_RUN) == 18
    # An advice at or below the runs present adds nothing, nor sets the repetitions.
    assert advice.targets([cand(0, "aa", 4, 50)], 6)[0] == \
        {"runs": {"a": 6, "b": 6, "s": 6}, "reps": None}


def test_the_budget_follows_the_fewest_runs_first_and_says_what_it_cut():
    p = advice.plan(CANDS, 6, 10, ONE_A_RUN)
    assert [(c["trial"], c["kind"]) for c in p["followed"]] == [(0, "aa"), (0, "shift")]
    assert [c["runs"] for c in p["cut"]] == [12, 30] and len(p["no_advice"]) == 1
    assert p["cost"] == 6
    assert advice.budget_line(p, 10, "runs", 6) == (
        "budget 10 runs: follows 2 of 4 advised cases with 6 more runs; 2 beyond it (advised "
        "12-30 runs a side); 1 UNKNOWN without advice (no run count decides them)")
    assert len(advice.plan(CANDS, 6, 18, ONE_A_RUN)["followed"]) == 3
    assert advice.plan(CANDS, 6, 1, ONE_A_RUN)["followed"] == []
    # In seconds the advised repetitions count: at 2 s a repetition, trial 0's six runs of 12
    # repetitions cost 144 s, so 143 s follows only its A/A case (4 runs of 10: 80 s).
    p = advice.plan(CANDS, 6, 143, lambda reps: 2.0 * (reps or 10))
    assert [(c["trial"], c["kind"]) for c in p["followed"]] == [(0, "aa")]
    assert "budget 143 s: follows 1 of 4 advised cases with 4 more runs (about 80 s)" in \
        advice.budget_line(p, 143, "s", 6)


def test_new_runs_go_index_first_and_a_short_budget_leaves_cases_unreached():
    tg = advice.targets([cand(0, "aa", 8), cand(1, "shift", 7)], 6)
    assert advice.extension_order(tg, 6) == [
        (0, "a", 6), (0, "b", 6), (1, "a", 6), (1, "s", 6), (0, "a", 7), (0, "b", 7)]
    followed = [cand(0, "aa", 8), cand(1, "shift", 7)]
    ok, short = advice.reached(followed, {0: {"a": 8, "b": 7, "s": 6}, 1: {"a": 7, "s": 7}})
    assert ok == followed[1:] and short == followed[:1]
    fresh = cand(0, "aa", 3, fresh=True)  # runs 6-8
    assert advice.reached([fresh], {0: {"a": 8, "b": 8}}) == ([], [fresh])
    assert advice.reached([fresh], {0: {"a": 9, "b": 9}}) == ([fresh], [])


@pytest.mark.parametrize("text, parsed", [
    ("600", (600.0, "s")), ("90s", (90.0, "s")), ("40runs", (40, "runs")), ("2runs", (2, "runs"))])
def test_a_budget_in_seconds_or_runs(text, parsed):
    assert advice.parse_budget(text) == parsed


@pytest.mark.parametrize("text, message", [
    ("0", "--budget 0.0: not a number of seconds in [1, 1000000]"),
    ("nan", "--budget nan: not a number of seconds"),
    ("1runs", "--budget 1runs: not a number of runs in [2, 100000]"),
    ("2.5runs", "--budget 2.5runs: not seconds (600 or 600s) or runs (40runs)"),
    ("ten", "--budget ten: not seconds"), ("runs", "--budget runs: not seconds")])
def test_a_bad_budget_is_one_phrase(text, message):
    with pytest.raises(ValueError) as e:
        advice.parse_budget(text)
    assert str(e.value).startswith(message)


def res(trial, kind, after, change=-10.0, counted=True, needed_after=None, runs=9):
    r = dict(cand(trial, kind, runs), after=after, change_after=change,
             needed_after=needed_after)
    if kind == "shift":
        r["counted"] = counted
    return r


def shift_results(right, unknown=0, same=0, faster=0, excluded=0):
    return ([res(i % 10, "shift", "DIFFERENT") for i in range(right)]
            + [res(0, "shift", "UNKNOWN", needed_after=18) for _ in range(unknown)]
            + [res(0, "shift", "SAME") for _ in range(same)]
            + [res(0, "shift", "DIFFERENT", +10.0) for _ in range(faster)]
            + [res(0, "shift", "UNKNOWN", counted=False) for _ in range(excluded)])


def test_the_shift_goal_passes_at_eighty_percent_of_twenty():
    line, ok = advice.shift_goal(shift_results(16, unknown=4, excluded=5))
    assert ok and line.startswith("10% shift followed: 16/20 80% DIFFERENT slower, 0/20 0% SAME")


@pytest.mark.parametrize("results", [
    shift_results(15, unknown=5),  # shift cases still UNKNOWN after following the advice
    shift_results(15, same=5),
    shift_results(15, faster=5),   # DIFFERENT the wrong way
    shift_results(19),             # all right, but fewer than 20 counted
    shift_results(15, excluded=5),
    []])
def test_the_shift_goal_fails(results):
    line, ok = advice.shift_goal(results)
    assert not ok and line.endswith("NOT met")


def aa_results(same, different=0, unknown=0, trial=None):
    out = [res(i % 10, "aa", "SAME") for i in range(same)]
    out += [res(i if trial is None else trial, "aa", "DIFFERENT") for i in range(different)]
    return out + [res(0, "aa", "UNKNOWN") for _ in range(unknown)]


def test_the_aa_goals_pass():
    results = aa_results(16, different=1, unknown=3)
    before = {t: 0 for t in range(10)}
    lines, ok = advice.goals(shift_results(20) + results, before)
    assert ok, lines
    assert lines[1].startswith("A/A followed: 16/20 80% SAME, 19/20 95% not DIFFERENT")
    assert lines[2].endswith("0 of 10; goal none: met")


@pytest.mark.parametrize("results, before", [
    (aa_results(15, unknown=5), {0: 0}),                      # 75 % SAME
    (aa_results(19), {0: 0}),                                 # 19 cases
    (aa_results(18, different=2, trial=3), {3: 0}),           # one trial with 2 DIFFERENT
    (aa_results(19, different=1, trial=3), {3: 1})])          # 1 before the advice + 1 after
def test_the_aa_goals_fail(results, before):
    lines, ok = advice.goals(shift_results(20) + results, before)
    assert not ok
    assert ["NOT met" in x for x in lines[1:]].count(True) == 1


def test_an_aa_trial_with_two_different_is_named():
    line, ok = advice.aa_trials_goal(aa_results(18, different=2, trial=3), {3: 0, 4: 1})
    assert not ok and line.endswith("1 of 2; goal none: NOT met (trial 4)")


def test_the_shortfall_says_what_compare_names_after_the_advice():
    results = shift_results(2, unknown=3) + [res(0, "shift", "UNKNOWN", runs=10)]
    line = advice.shortfall(results, "shift")
    assert line == ("10%: advice aimed at DIFFERENT 6, SAME 0, either way 0; still UNKNOWN after "
                    "it 4/6 67%; compare then names 2.0x the runs followed (median; 2.0-2.0x); 1 then "
                    "without advice")


def test_the_goal_lines_fit_in_100_columns_at_any_count():
    big = shift_results(900, same=100) + aa_results(900, different=100, trial=0)
    lines, _ = advice.goals(big, {0: 0})
    assert all(len(x) <= 100 for x in lines[:2]), lines


def test_the_tables_fit_in_100_columns():
    results = shift_results(3, unknown=1, excluded=1) + aa_results(3, different=1)
    p = advice.plan(CANDS, 6, 10, ONE_A_RUN)
    results.append(dict(cand(2, "aa", 4, fresh=True), after="SAME", change_after=0.1,
                        needed_after=None))
    lines = advice.case_table(results, p, [cand(1, "aa", 12)])
    assert len(lines) == 1 + len(results) + 2 + 1 + 1
    assert any(x.endswith("on new runs 7-10") for x in lines)
    assert any(x.endswith("beyond the budget") for x in lines)
    assert any(x.endswith("outside 8-12% over them") for x in lines)
    before = {t: {"aa": core.count({}), "shift": core.count({})} for t in range(10)}
    lines += advice.trial_table(results, before, {0: 12})
    assert all(len(x) <= 100 for x in lines), max(lines, key=len)
