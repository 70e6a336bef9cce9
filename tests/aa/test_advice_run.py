"""The advice mode run as a user runs it (python3 -m runners.aabench advice), with a stand-in
wakebench that records each call: `run` writes a result set of the config's cases (the shifted
config's 10 % slower), `compare` answers UNKNOWN with advice until a side holds the advised runs,
each of the advised repetitions, and then decides (A/A SAME, the shift DIFFERENT slower). What
it checks: which runs the advice adds, at which repetitions, how the budget stops them, and the
summary's counts."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FAKE = r'''
import json, sys
args = sys.argv[1:]
with open(CALLS, "a") as f:
    f.write(" ".join(args) + "\n")
# Runs a side and repetitions a run that decide each case.
ADVICE = {"pipe/processes/llc": (5, 7), "pipe/threads/llc": (9, 4),
          "pipe/processes/same-cpu": (3, 30)}


def run():
    cfg = json.load(open(args[args.index("--config") + 1]))
    reps = (int(args[args.index("--benchmark_repetitions") + 1])
            if "--benchmark_repetitions" in args else cfg["defaults"]["repetitions"])
    doc = json.load(open(TEMPLATE))
    by_name = {c["name"]: c for c in doc["cases"]}
    cases = []
    for e in cfg["cases"]:
        ident = "/".join(e[k][0] for k in ("mechanisms", "modes", "placements"))
        work = (e.get("params") or {}).get("work_ns", [0])[0]
        c = dict(by_name[ident], name=ident + (f"/work={work}ns" if work else ""))
        c["params"] = dict(c["params"], work_ns=work)
        median = c["rtt_ns"]["median"] * (1.10 if work else 1.0)
        c["rtt_ns"] = dict(c["rtt_ns"], median=median)
        c["repetitions"] = [{"median": median, "p99": 2 * median}] * reps
        cases.append(c)
    doc["cases"], doc["benchmarks"] = cases, []
    json.dump(doc, open(args[args.index("--out") + 1], "w"))


def compare():
    sides = args[3:]
    a, b = sides[:sides.index("--")], sides[sides.index("--") + 1:]
    shift = any("-as-a" in x for x in b)
    rows = []
    reps = {}
    for path in a:
        for c in json.load(open(path))["cases"]:
            reps[c["name"]] = min(reps.get(c["name"], 1000), len(c["repetitions"]))
    for c in json.load(open(a[0]))["cases"]:
        needed, per_run = ADVICE[c["name"]]
        cell = {"verdict": "UNKNOWN", "change_pct": -3.0, "needed": needed, "needed_for":
                "DIFFERENT" if shift else "SAME", "needed_repetitions_per_run": per_run}
        if len(a) >= needed and reps[c["name"]] >= per_run:
            cell = {"verdict": "DIFFERENT" if shift else "SAME",
                    "change_pct": -10.0 if shift else 0.5}
        rows.append({"mechanism": c["mechanism"], "mode": c["mode"],
                     "placement": c["placement"], "pair": "", "key": c["name"],
                     "cells": [{"verdict": None}, cell]})
    print(json.dumps({"schema": "wakebench-compare", "schema_version": 2, "rows": rows}))


run() if args[0] == "run" else compare()
'''


@pytest.fixture
def advice(tmp_path):
    """Runs `python3 -m runners.aabench advice ARGS` (or another mode) on a config of three pinned
    cases, 10 repetitions a run, with the stand-in wakebench; returns (the run, the calls made, the
    --out folder)."""
    build, calls, out = tmp_path / "build", tmp_path / "calls.txt", tmp_path / "out"
    build.mkdir()
    template = os.path.join(ROOT, "tests/fixtures/results/base.json")
    (build / "wakebench").write_text(f"#!{sys.executable}\nCALLS = {str(calls)!r}\n"
                                     f"TEMPLATE = {template!r}\n" + FAKE)
    (build / "wakebench").chmod(0o755)
    config = tmp_path / "two.json"
    config.write_text(json.dumps({"schema_version": 1, "name": "three", "defaults": {
        "repetitions": 10}, "cases": [
        {"mechanisms": ["pipe"], "modes": ["processes"], "placements": ["llc"]},
        {"mechanisms": ["pipe"], "modes": ["threads"], "placements": ["llc"]},
        {"mechanisms": ["pipe"], "modes": ["processes"], "placements": ["same-cpu"]}]}))

    def run(*args, mode="advice"):
        env = dict(os.environ, WB_BUILD_DIR=str(build), PYTHONDONTWRITEBYTECODE="1")
        p = subprocess.run([sys.executable, "-m", "runners.aabench", mode, "--trials", "1",
                            "--runs", "3", "--config", str(config), "--out", str(out),
                            *map(str, args)], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
        lines = calls.read_text().splitlines() if calls.exists() else []
        calls.unlink(missing_ok=True)
        return p, lines, out
    return run


def runs_made(calls):
    """[(set name, repetitions or None)] of the `run` calls."""
    out = []
    for c in calls:
        w = c.split()
        if w[0] == "run":
            reps = w[w.index("--benchmark_repetitions") + 1] if "--benchmark_repetitions" in w \
                else None
            out.append((os.path.basename(w[w.index("--out") + 1]), reps))
    return out


def test_a_small_budget_follows_the_cheapest_advice_and_stops(advice):
    p, calls, out = advice("--budget", "4runs")
    assert p.returncode == 1, p.stderr[-500:]
    first = [(f"runs0-{s}{i}.json", None) for i in range(3) for s in "abs"]
    # The A/A advice of pipe/processes/llc: 5 runs a side of 7 repetitions, both sides.
    assert runs_made(calls) == first + [("runs0-a3.json", "7"), ("runs0-b3.json", "7"),
                                        ("runs0-a4.json", "7"), ("runs0-b4.json", "7")]
    summary = (out / "summary.txt").read_text()
    assert ("budget 4 runs: follows 1 of 6 advised cases with 4 more runs; 5 beyond it "
            "(advised 3-9 runs a side)\nspent 4 runs\n") in summary
    assert "    1 A/A  pipe/processes/llc          5    7 SAME      SAME" in summary
    assert "A/A followed: 1/1 100% SAME" in summary
    assert summary.count("NOT met") == 2  # fewer than 20 cases of each kind; the trial is clean
    # Again with --reuse: nothing runs again, the same summary.
    p, calls, _ = advice("--budget", "4runs", "--reuse")
    assert p.returncode == 1 and runs_made(calls) == []
    # The same but for the lines that say when it ran ("machine ..., finished HH:MM UTC ..."),
    # which differ when the two runs straddle a minute.
    def timeless(text):
        return [line for line in text.split("\n")[2:] if not line.startswith("machine ")]
    assert timeless((out / "summary.txt").read_text()) == timeless(summary)


def test_a_budget_that_covers_the_advice_runs_it_all(advice):
    p, calls, out = advice("--budget", "40runs")
    made = runs_made(calls)
    # Every stream to 9 runs (pipe/threads/llc), at the trial's largest advised repetitions, 30.
    assert len(made) == 9 + 18 and set(made[9:]) == {
        (f"runs0-{s}{i}.json", "30") for i in range(3, 9) for s in "abs"}
    # pipe/processes/same-cpu, advised 3 runs of 30 repetitions, on the new runs 3-5 only.
    sides = [c.split()[3:] for c in calls if c.startswith("compare")]
    new = [f"runs0-a{i}.json" for i in (3, 4, 5)]
    assert [os.path.basename(x) for x in sides[-2][:sides[-2].index("--")]] == new
    summary = (out / "summary.txt").read_text()
    assert "pipe/processes/same-cpu     3   30 SAME      SAME        +0.5% on new runs 4-6" \
        in summary
    assert "10% shift followed: 3/3 100% DIFFERENT slower" in summary
    assert "A/A followed: 3/3 100% SAME" in summary
    assert "\nspent 18 runs\n" in summary and p.returncode == 1


def test_the_runs_mode_shares_the_streams_and_compares_at_every_run_count(advice):
    p, calls, out = advice("--calibration-pairs", "0", mode="runs")
    assert p.returncode == 1, p.stderr[-500:]
    assert runs_made(calls) == [(f"runs0-{s}{i}.json", None) for i in range(3) for s in "abs"]
    compares = [c.split() for c in calls if c.startswith("compare")]
    assert [(c.index("--") - 3, "-as-a" in c[-1]) for c in compares] == [
        (r, shift) for r in (1, 2, 3) for shift in (False, True)]
    assert " 3  1 of 1 trials" in (out / "summary.txt").read_text()


def test_a_reused_run_shorter_than_the_advice_is_refused(advice):
    advice("--budget", "4runs")  # runs0-a3 .. b4 of 7 repetitions
    p, calls, _ = advice("--budget", "40runs", "--reuse")  # now all at 30
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr[-300:]
    assert "runs0-a3.json: 7 repetitions, the advice needs 30: use a new --out" in p.stderr
