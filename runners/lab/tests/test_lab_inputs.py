"""wakebench-lab's arguments and input files by the input rules (wblab/inputs.py,
docs/result-set.md#input-rules), run as a user runs it: a refusal is one line on stderr and exit
status 2 before anything runs, nothing blocks on a FIFO, and --help exits 0."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wblab import LabError
from wblab.kernel import read_meta

LAB = Path(__file__).resolve().parent.parent / "wakebench-lab"
DEEP = "[" * 100000 + "]" * 100000


def lab(*argv, cwd=None):
    """wakebench-lab ARGV with nothing to run a guest with: at most 60 s."""
    env = dict(os.environ, WB_BINARY="/nonexistent/wakebench", PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, str(LAB), *map(str, argv)], capture_output=True,
                          text=True, timeout=60, env=env, cwd=cwd, stdin=subprocess.DEVNULL)


def refused(r, *parts):
    """One line on stderr naming each of `parts`, exit status 2, nothing on stdout."""
    assert (r.returncode, r.stdout) == (2, ""), (r.returncode, r.stderr[-400:])
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr[-400:]
    for part in parts:
        assert part in r.stderr, r.stderr


def bad_file(tmp_path, kind):
    """A FIFO, /dev/zero or a document nested 100000 deep, where a file is expected."""
    path = tmp_path / f"{kind}.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.write_text(DEEP)
    return path


WHY = {"fifo": "is a FIFO, not a regular file",
       "dev-zero": "is a character device, not a regular file",
       "deep": "nested deeper than 128 levels"}


@pytest.mark.parametrize("kind", WHY)
def test_a_cases_file_that_is_no_regular_file_or_too_deep_is_refused(tmp_path, kind):
    path = bad_file(tmp_path, kind)
    r = lab("matrix", "--presets", "smt2", "--cases", path, "--out", tmp_path / "o")
    refused(r, f"--cases {path}: not a readable JSON config", WHY[kind])
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("kind", WHY)
def test_every_other_file_the_lab_reads_is_refused_alike(tmp_path, kind):
    path = bad_file(tmp_path, kind)
    refused(lab("pmu", path, "instructions"), f"{path}: not a readable result set", WHY[kind])
    refused(lab("renumber", "arm64-smt2-cls", "arm64-smt2-cls-strided", path, tmp_path / "o"),
            f"{path}: not a readable config", WHY[kind])
    if kind != "deep":  # a matrix file is markdown: brackets are text
        refused(lab("tables", "verdicts", path, path), f"{path}: not a readable matrix file",
                WHY[kind])
    cell = tmp_path / "m" / "arm64-smt2-cls" / "gated" / "mainline"
    cell.mkdir(parents=True)
    if kind == "dev-zero":
        (cell / "agreement.json").symlink_to("/dev/zero")
    else:
        os.replace(path, cell / "agreement.json")
    refused(lab("twins", tmp_path / "m", "arm64-smt2-cls", "arm64-smt2-cls-strided",
                "mainline"), "agreement.json: not a readable matrix cell's agreement", WHY[kind])


def test_a_kernels_meta_json_too_deep_is_one_line(tmp_path):
    (tmp_path / "meta.json").write_text(DEEP)
    with pytest.raises(LabError, match=r"meta.json: not a readable kernel's meta.json \(invalid "
                                       r"JSON at byte 128: nested deeper than 128 levels\)$"):
        read_meta(tmp_path / "bzImage")


def test_an_unknown_preset_is_one_line_naming_it_and_the_known_ones():
    r = lab("--preset", "bogus")
    refused(r, "wakebench-lab: argument --preset: invalid choice: 'bogus'", "'smt2'")
    refused(lab("matrix", "--arch", "sparc"), "wakebench-lab matrix: argument --arch: invalid",
            "'x86_64'")
    refused(lab("matrix", "--runs", "two"), "--runs: invalid int value: 'two'")
    refused(lab("pmu", "only-one"), "wakebench-lab pmu: the following arguments are required")


@pytest.mark.parametrize("argv", [["--help"], ["matrix", "--help"], ["twins", "--help"],
                                  ["renumber", "--help"], ["pmu", "--help"], ["tables", "-h"]])
def test_help_is_printed_with_exit_status_0(argv):
    r = lab(*argv)
    assert (r.returncode, r.stderr) == (0, "") and r.stdout.startswith("usage: wakebench-lab")


@pytest.mark.parametrize("mem", ["-5", "0", "255"])
def test_one_guest_with_too_little_memory_is_refused_before_anything_runs(tmp_path, mem):
    r = lab("--preset", "smt2", "--mem", mem, "--out", tmp_path / "o")
    refused(r, f"wakebench-lab: --mem: {mem} MiB is less than a guest needs (256)")
    refused(lab("matrix", "--presets", "smt2", "--mem", mem, "--out", tmp_path / "o"),
            f"--mem: {mem} MiB is less than a guest needs (256)")
    assert not (tmp_path / "o").exists()


def test_a_twins_agreement_that_is_not_one_is_one_line(tmp_path):
    cell = tmp_path / "arm64-smt2-cls" / "gated" / "mainline"
    cell.mkdir(parents=True)
    (cell / "agreement.json").write_text(json.dumps({"cases": [7]}))
    refused(lab("twins", tmp_path, "arm64-smt2-cls", "arm64-smt2-cls-strided", "mainline"),
            'agreement.json: not a matrix cell\'s agreement (no "cases" list of objects)')
