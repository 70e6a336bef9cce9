"""The parses of the mmtests shellpack and the LKP program (integrations/), run as the engines run
them on committed result sets: the exact sub-headings, keys and values of tests/fixtures/results/
base.json (hand-made, values chosen to be worked out by hand), marked repetitions left out, and a
set that is no readable result set refused in one line with nothing on stdout. Also: the engines'
configs and job name exactly wakebench's quick suite and seed configs."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

INTEGRATIONS = Path(__file__).resolve().parent.parent
REPO = INTEGRATIONS.parent
RESULTS = REPO / "tests/fixtures/results"
PARSE_RESULTS = INTEGRATIONS / "mmtests/shellpack/parse-results"
LKP_PARSE = INTEGRATIONS / "lkp/wakebench/parse"
sys.path.insert(0, str(INTEGRATIONS))

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


# --- the input rules (docs/result-set.md#input-rules): what no engine's parse may trust ---------

ENGINES = ["mmtests", "lkp"]
KEPT = {"mmtests": "wakebench.json", "lkp": "wakebench.output"}


def placed(engine, tmp_path, place, alt=None, env=None):
    """The engine's parse, as the engine runs it, on the file place(path) puts where the engine
    keeps the set; at most 60 s (a parse that blocks fails)."""
    if engine == "mmtests":
        logs = tmp_path / "logs"
        logs.mkdir(exist_ok=True)
        place(logs / KEPT[engine])
        cmd, stdin = [str(PARSE_RESULTS), str(logs)] + ([alt] if alt else []), None
        env = dict(os.environ, **(env or {}))
    else:
        place(tmp_path / KEPT[engine])
        (tmp_path / "wakebench").write_text("wakebench run ...\n")
        cmd, stdin = [str(LKP_PARSE), str(tmp_path / "wakebench")], subprocess.DEVNULL
        env = {"PATH": "/usr/bin:/bin", "RESULT_ROOT": str(tmp_path),
               "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    return subprocess.run(cmd, stdin=stdin, capture_output=True, text=True, env=env, timeout=60)


def edited(edit):
    """A place function: base.json with `edit` applied to its document, written as text."""
    def place(path):
        doc = json.loads((RESULTS / "base.json").read_text())
        text = edit(doc)
        path.write_text(text if isinstance(text, str) else json.dumps(doc))
    return place


def refused_in_one_line(r, engine, why):
    assert (r.returncode, r.stdout) == (2, ""), r.stdout[-300:]
    assert re.fullmatch(f"wakebench {engine} parse: [^\n]*/{KEPT[engine]}: {why}[^\n]*\n",
                        r.stderr), r.stderr[-300:]


def median_text(word):
    """base.json with its first repetition's median written as `word` (NaN, 1e999, ...)."""
    return lambda doc: json.dumps(doc).replace('"median": 2290', f'"median": {word}', 1)


@pytest.mark.parametrize("place, why", [
    (os.mkfifo, r"not a readable result set \(is a FIFO, not a regular file\)"),
    (lambda p: p.symlink_to("/dev/zero"),
     r"not a readable result set \(is a character device, not a regular file\)"),
    (lambda p: p.mkdir(), r"not a readable result set \(is a directory, not a regular file\)"),
    (lambda p: p.write_text("[" * 100000 + "]" * 100000),
     r"not a readable result set \(invalid JSON at byte 128: nested deeper than 128 levels\)"),
    (edited(median_text("NaN")), r"not a readable result set \(invalid JSON: NaN is not"),
    (edited(median_text("Infinity")), r"not a readable result set \(invalid JSON: Infinity"),
    (edited(median_text("-Infinity")), r"not a readable result set \(invalid JSON: -Infinity"),
    (edited(median_text("1e999")), r"not a readable result set \(invalid JSON: number overflow"),
    (edited(median_text("1" + "0" * 400)), r"not a readable result set \(invalid JSON: number "),
    (edited(median_text("2290, \"median\": 1")),
     r'not a readable result set \(invalid JSON: duplicate key "median"\)'),
    (edited(lambda d: d["cases"][0].update(name="pipe/processes/same-cpu\tinjected")),
     r'cases\[0\].name "pipe/processes/same-cpu\\tinjected" has a character outside'),
    (edited(lambda d: d["cases"][0].update(name="x\nevil.median_us: 999")),
     r'cases\[0\].name "x\\nevil.median_us: 999" has a character outside'),
    (edited(lambda d: d["cases"][0].update(reason="\x1b]0;owned\x07")),
     r'cases\[0\].reason "\\u001b\]0;owned\\u0007" has a control character'),
    (edited(lambda d: d["cases"][0]["repetitions"][0].update(median=0)),
     r"cases\[0\].repetitions\[0\].median is 0, not a positive number"),
], ids=["fifo", "dev-zero", "directory", "deep", "nan", "infinity", "-infinity", "1e999",
        "huge-int", "duplicate-key", "tab-in-name", "newline-in-name", "escape-in-text",
        "zero-median"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_set_against_the_input_rules_is_refused_in_one_line(tmp_path, engine, place, why):
    refused_in_one_line(placed(engine, tmp_path, place), engine, why)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_set_over_the_size_limit_is_refused(tmp_path, engine):
    pad = edited(lambda d: d.update(note=d.get("note", "") + " " * (1 << 20)))
    r = placed(engine, tmp_path, pad, env={"WAKEBENCH_MAX_INPUT_MIB": "1"})
    refused_in_one_line(r, engine, r"not a readable result set \(is \d+ bytes, larger than the "
                        r"input limit of 1 MiB \(WAKEBENCH_MAX_INPUT_MIB raises it\)\)")
    assert placed(engine, tmp_path, pad, env={"WAKEBENCH_MAX_INPUT_MIB": "2"}).returncode == 0


def test_huge_finite_values_are_written_without_overflow(tmp_path):
    # tps of 1.7e308 in every repetition: their sum overflows a double, their mean does not.
    def huge(doc):
        case = next(c for c in doc["cases"] if c["name"] == "binder-like/processes/llc/w2s4")
        for rep in case["repetitions"]:
            rep["tps"] = 1.7e308
    r = placed("lkp", tmp_path, edited(huge))
    assert (r.returncode, r.stderr) == (0, "")
    stats = dict(line.split(": ") for line in r.stdout.splitlines())
    key = "binder-like/processes/llc/w2s4.tps"
    assert float(stats[key]) == 1.7e308 and stats[key + "_stddev%"] == "0"


def test_a_metric_that_is_no_name_is_refused_before_the_set_is_read(tmp_path):
    r = placed("mmtests", tmp_path, edited(lambda d: None), alt="p\t99")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == ('wakebench mmtests parse: METRIC "p\\t99" has a character outside '
                        "[A-Za-z0-9._:,=/+-]\n")


def test_the_writers_refuse_a_field_that_would_break_a_row():
    import samples  # noqa: E402  (integrations/, on the path below)
    for bad in ("a\tb", "a\nb", "a\rb", "a: b"):
        s = samples.Samples(bad, "median", ((1, 2.5),))
        with pytest.raises(samples.LabError, match="cannot be written"):
            samples.mmtests_lines([s])
        with pytest.raises(samples.LabError, match="cannot be written"):
            samples.lkp_lines([s])
    with pytest.raises(samples.LabError, match="not a finite number"):
        samples.number(float("nan"))
