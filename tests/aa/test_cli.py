"""The A/A benchmark's arguments and input files (runners/aabench/__main__.py), run as a user runs
it with a stand-in wakebench that records each call: every bad argument or file is one line on
stderr and exit status 2 before the first run (a run takes minutes), and no file blocks it."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def bench(tmp_path):
    """Runs `python3 -m runners.aabench ARGS` (at most 60 s) with a wakebench that only writes
    its arguments to calls.txt and fails; returns (the run, the calls made)."""
    build = tmp_path / "build"
    build.mkdir()
    calls = tmp_path / "calls.txt"
    (build / "wakebench").write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexit 1\n')
    (build / "wakebench").chmod(0o755)

    def run(*args):
        env = dict(os.environ, WB_BUILD_DIR=str(build), PYTHONDONTWRITEBYTECODE="1")
        p = subprocess.run([sys.executable, "-m", "runners.aabench", *map(str, args),
                            "--out", str(tmp_path / "out")], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        return p, calls.read_text().splitlines() if calls.exists() else []
    return run


def refused_before_any_run(p, calls, *parts):
    assert (p.returncode, p.stdout, calls) == (2, "", []), (p.returncode, calls, p.stderr[-300:])
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr[-300:]
    for part in parts:
        assert part in p.stderr, p.stderr


@pytest.mark.parametrize("args, message", [
    (["--budget", "0"], "--budget 0.0: not a number of seconds in [1, 1000000]"),
    (["--budget", "nan"], "--budget nan: not a number of seconds"),
    (["--budget", "inf"], "--budget inf: not a number of seconds"),
    (["--budget", "2e6"], "--budget 2000000.0: not a number of seconds"),
    (["--looks", "0"], "--looks 0: not in [1, 100]"),
    (["--looks", "101"], "--looks 101: not in [1, 100]"),
    (["--base-repetitions", "0"], "--base-repetitions 0: not a positive count"),
    (["--looks", "ten"], "argument --looks: invalid int value: 'ten'"),
    (["--pairs", "0"], "--pairs, --rounds, --trials and --runs must be >= 1"),
])
def test_a_bad_number_is_refused_before_the_calibration_runs(bench, tmp_path, args, message):
    p, calls = bench("until-decided", *args)
    refused_before_any_run(p, calls, "python3 -m runners.aabench: " + message)
    assert not (tmp_path / "out").exists()


def test_an_unknown_mode_is_one_line(bench):
    refused_before_any_run(*bench("al"), "argument mode: invalid choice: 'al'")


@pytest.mark.parametrize("kind, why", [
    ("fifo", "is a FIFO, not a regular file"),
    ("dev-zero", "is a character device, not a regular file"),
    ("deep", "invalid JSON at byte 128: nested deeper than 128 levels"),
    ("nan", "invalid JSON: NaN is not a number"),
])
@pytest.mark.parametrize("option", ["--config", "--base"])
def test_a_file_against_the_input_rules_is_refused_before_any_run(bench, tmp_path, option, kind,
                                                                  why):
    path = tmp_path / f"{kind}.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.write_text("[" * 1000 + "]" * 1000 if kind == "deep" else '{"a": NaN}')
    p, calls = bench("shift", option, path)
    what = "config" if option == "--config" else "result set"
    refused_before_any_run(p, calls, f"aabench: {path}: not a readable {what} ({why})")


@pytest.mark.parametrize("args, message", [
    ([], "advice needs --budget for the runs it adds: seconds (600 or 600s) or runs (40runs)"),
    (["--budget", "1runs"], "--budget 1runs: not a number of runs in [2, 100000]"),
    (["--budget", "lots"], "--budget lots: not seconds (600 or 600s) or runs (40runs)"),
    (["--budget", "0s"], "--budget 0.0: not a number of seconds in [1, 1000000]"),
    (["--budget", "40runs", "--runs", "1"], "--runs 1: advice is taken at the run level"),
    (["--budget", "40runs", "--trials", "0"], "--pairs, --rounds, --trials and --runs must be"),
])
def test_advice_refuses_a_bad_budget_or_run_count_before_any_run(bench, tmp_path, args, message):
    p, calls = bench("advice", *args)
    refused_before_any_run(p, calls, "python3 -m runners.aabench: " + message)
    assert not (tmp_path / "out").exists()


def test_a_budget_in_runs_is_advices_only(bench):
    p, calls = bench("until-decided", "--budget", "40runs")
    refused_before_any_run(p, calls, "--budget 40runs: only advice takes a budget in runs")
