"""The parses of the mmtests shellpack and the LKP program (integrations/), run as the engines run
them on committed result sets: the exact sub-headings, keys and values of tests/fixtures/results/
base.json (hand-made, values chosen to be worked out by hand), marked repetitions left out, and a
set that is no readable result set refused in one line with nothing on stdout. Also: the engines'
configs and job name exactly wakebench's quick suite and seed configs."""
import json
import re
import subprocess
from pathlib import Path

import pytest

INTEGRATIONS = Path(__file__).resolve().parent.parent
REPO = INTEGRATIONS.parent
RESULTS = REPO / "tests/fixtures/results"
PARSE_RESULTS = INTEGRATIONS / "mmtests/shellpack/parse-results"
LKP_PARSE = INTEGRATIONS / "lkp/wakebench/parse"

# base.json's ok cases, in its order (pipe/processes/smt-sibling was skipped: no sub-heading).
BASE_CASES = ["pipe/processes/same-cpu", "pipe/processes/llc", "pipe/processes/kernel",
              "pipe/threads/llc", "eventfd/threads/llc", "binder-like/processes/llc/w2s4",
              "unix-stream/processes/llc"]


def mmtests(set_path, tmp_path, alt=None):
    """parse-results as ExtractShellpack.pm runs it: on the bench's log folder, [ALTREPORT]."""
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    (logs / "wakebench.json").write_bytes(Path(set_path).read_bytes())
    return subprocess.run([str(PARSE_RESULTS), str(logs)] + ([alt] if alt else []),
                          capture_output=True, text=True)


def lkp(set_path, tmp_path):
    """parse as bin/run-stats runs it: RESULT_ROOT set, the program's stdout capture on stdin."""
    (tmp_path / "wakebench.output").write_bytes(Path(set_path).read_bytes())
    (tmp_path / "wakebench").write_text("wakebench run ...\n")
    with open(tmp_path / "wakebench") as stdin:
        return subprocess.run([str(LKP_PARSE), str(tmp_path / "wakebench")], stdin=stdin,
                              capture_output=True, text=True,
                              env={"PATH": "/usr/bin:/bin", "RESULT_ROOT": str(tmp_path),
                                   "PYTHONDONTWRITEBYTECODE": "1"})


def rows(stdout):
    return [line.split("\t") for line in stdout.splitlines()]


def test_mmtests_median_is_one_line_per_repetition_of_each_ok_case(tmp_path):
    r = mmtests(RESULTS / "base.json", tmp_path)
    assert (r.returncode, r.stderr) == (0, "")
    got = rows(r.stdout)
    assert all(len(row) == 6 and row[0] == "median" and row[2] == row[5] == "_" for row in got)
    assert list(dict.fromkeys(row[1] for row in got)) == BASE_CASES
    assert len(got) == 33  # 6 cases of 5 repetitions, eventfd of 3
    by_case = {c: [(row[3], row[4]) for row in got if row[1] == c] for c in BASE_CASES}
    assert by_case["pipe/processes/same-cpu"] == [
        ("1", "2.29"), ("2", "2.3"), ("3", "2.28"), ("4", "2.295"), ("5", "2.285")]
    assert by_case["eventfd/threads/llc"] == [("1", "2.5"), ("2", "2.52"), ("3", "2.51")]


def test_mmtests_alternative_reports_p99_and_tps(tmp_path):
    p99 = rows(mmtests(RESULTS / "base.json", tmp_path, "p99").stdout)
    assert len(p99) == 33 and p99[0] == ["p99", "pipe/processes/same-cpu", "_", "1", "3.664", "_"]
    tps = mmtests(RESULTS / "base.json", tmp_path, "tps")
    assert [row[1:5] for row in rows(tps.stdout)] == [
        ["binder-like/processes/llc/w2s4", "_", str(i), v]
        for i, v in enumerate(["62700", "62757", "62800", "62650", "62900"], 1)]


def test_lkp_stats_are_each_cases_mean_and_spread(tmp_path):
    r = lkp(RESULTS / "base.json", tmp_path)
    assert (r.returncode, r.stderr) == (0, "")
    stats = dict(line.split(": ") for line in r.stdout.splitlines())
    assert len(stats) == len(r.stdout.splitlines()) == 2 * (2 * 7 + 1)
    assert {k for k in stats if k.endswith(".median_us")} == {
        f"{c}.median_us" for c in BASE_CASES}
    # pipe/processes/same-cpu: 2290 2300 2280 2295 2285 ns, deviations 0 10 -10 5 -5: sd
    # sqrt(250 / 4) = 7.906 ns, 0.3452 % of the mean 2290 ns.
    assert stats["pipe/processes/same-cpu.median_us"] == "2.29"
    assert stats["pipe/processes/same-cpu.median_us_stddev%"] == "0.3452"
    # eventfd/threads/llc p99: 4000 4032 4016 ns; sd 16 ns, 0.3984 % of 4016.
    assert stats["eventfd/threads/llc.p99_us"] == "4.016"
    assert stats["eventfd/threads/llc.p99_us_stddev%"] == "0.3984"
    assert stats["binder-like/processes/llc/w2s4.tps"] == "62761.4"
    assert [k for k in stats if ".tps" in k] == ["binder-like/processes/llc/w2s4.tps",
                                                 "binder-like/processes/llc/w2s4.tps_stddev%"]


def test_marked_repetitions_and_cases_that_did_not_run_are_left_out(tmp_path):
    doc = json.loads((RESULTS / "base.json").read_text())
    doc["schema_version"] = 3
    case = doc["cases"][0]
    for i, rep in enumerate(case["repetitions"]):
        rep["marked"] = i in (1, 3)  # 2300 and 2295 timed syscalls, not wakeups
    # A failed case has no repetitions (docs/result-set.md); one that keeps some still counts none.
    doc["cases"][1]["status"] = "failed"
    marked = tmp_path / "marked.json"
    marked.write_text(json.dumps(doc))
    got = rows(mmtests(marked, tmp_path).stdout)
    assert [row[3:5] for row in got if row[1] == case["name"]] == [
        ["1", "2.29"], ["3", "2.28"], ["5", "2.285"]]
    stats = dict(line.split(": ") for line in lkp(marked, tmp_path).stdout.splitlines())
    assert stats[case["name"] + ".median_us"] == "2.285"
    failed = doc["cases"][1]["name"]
    assert failed not in {row[1] for row in got} and not any(k.startswith(failed) for k in stats)


@pytest.mark.parametrize("name, why", [
    ("truncated.json", r"not a readable result set \(invalid JSON"),
    ("schema-v5.json", r"schema_version 5 is not supported"),
])
@pytest.mark.parametrize("engine", ["mmtests", "lkp"])
def test_what_is_no_readable_set_is_refused_in_one_line(tmp_path, engine, name, why):
    r = (mmtests if engine == "mmtests" else lkp)(RESULTS / name, tmp_path)
    kept = "wakebench.json" if engine == "mmtests" else "wakebench.output"
    assert (r.returncode, r.stdout) == (2, "")
    assert re.fullmatch(f"wakebench {engine} parse: [^\n]*/{kept}: {why}[^\n]*\n", r.stderr)


def test_a_metric_no_repetition_records_is_refused(tmp_path):
    r = mmtests(RESULTS / "base.json", tmp_path, "p42")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.endswith('wakebench.json: no repetition records the metric "p42"\n')


def wakebench_configs():
    return ["quick"] + sorted(f"seeds/{p.stem}" for p in (REPO / "configs/seeds").glob("*.json"))


def test_the_engines_run_the_quick_suite_and_every_seed_config():
    mmtests_configs = {}
    for path in sorted((INTEGRATIONS / "mmtests/configs").glob("config-*")):
        text = path.read_text()
        config = re.search(r"^export WAKEBENCH_CONFIG=(\S+)$", text, re.M).group(1)
        assert 'export MMTESTS="wakebench"' in text
        assert path.name == "config-scheduler-wakebench-" + config.replace("seeds/", "seed-")
        mmtests_configs[config] = path
    assert sorted(mmtests_configs) == sorted(wakebench_configs())
    job = (INTEGRATIONS / "lkp/jobs/wakebench.yaml").read_text()
    assert re.findall(r"^    - (\S+)$", job, re.M) == wakebench_configs()
