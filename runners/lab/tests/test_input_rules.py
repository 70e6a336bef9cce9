"""The input rules on the Python side (wblab/inputs.py) against the table both readers are held to
(tests/fixtures/input-rules/table.json; the C++ reader, common/util/input.h, reads the same rows):
every row answered as the table says, and a refusal is one line saying what and where."""
import json
import os
import subprocess
import sys

import pytest

from wblab import REPO, inputs

TABLE = json.loads((REPO / "tests/fixtures/input-rules/table.json").read_text())
ROWS = TABLE["rows"]


@pytest.fixture(autouse=True)
def every_test_without_hanging(no_hang):
    """A read that blocks fails its test instead of hanging the suite (conftest.no_hang)."""


def make(kind, tmp_path, monkeypatch):
    """The file of one file_kind row (the table's file_kinds), its path."""
    monkeypatch.delenv(inputs.MAX_ENV, raising=False)
    regular = tmp_path / "regular.json"
    regular.write_text("{}")
    if kind in ("at_limit", "over_limit"):
        monkeypatch.setenv(inputs.MAX_ENV, "1")
        regular.write_bytes(b" " * ((1 << 20) + (kind == "over_limit")))
    elif kind == "empty":
        regular.write_bytes(b"")
    elif kind in ("fifo", "symlink_to_fifo"):
        os.mkfifo(tmp_path / "fifo")
    paths = {"symlink_to_regular": regular, "symlink_to_fifo": tmp_path / "fifo"}
    if kind in paths:
        (tmp_path / "link").symlink_to(paths[kind])
        return tmp_path / "link"
    return {"missing": tmp_path / "none.json", "directory": tmp_path, "fifo": tmp_path / "fifo",
            "char_device": "/dev/null"}.get(kind, regular)


def accepted(row, tmp_path, monkeypatch):
    """Whether the Python reader takes the row's input; a refusal must be one line."""
    kind, value = row["kind"], row["input"]
    if kind == "name":
        return inputs.is_safe_name(value)
    if kind == "text":
        return inputs.is_text(value)
    try:
        if kind == "json_text":
            inputs.loads(value)
        else:
            inputs.read_bytes(make(value, tmp_path, monkeypatch), "file")
    except (inputs.Refused, inputs.InputError) as e:
        assert "\n" not in str(e) and len(str(e)) < 200
        return False
    return True


def test_the_table_has_every_kind_and_each_row_says_why():
    assert TABLE["schema"] == "wakebench-input-rules"
    assert {r["kind"] for r in ROWS} == {"json_text", "name", "text", "file_kind"}
    assert all(set(r) == {"kind", "input", "ok", "why"} and isinstance(r["ok"], bool)
               and 0 < len(r["why"]) <= 60 for r in ROWS)
    assert {r["input"] for r in ROWS if r["kind"] == "file_kind"} == set(TABLE["file_kinds"])
    for kind in ("json_text", "name", "text", "file_kind"):  # each kind shown both ways
        assert {r["ok"] for r in ROWS if r["kind"] == kind} == {True, False}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['kind']}: {r['why']}" for r in ROWS])
def test_python_reader_answers_as_the_table(row, tmp_path, monkeypatch):
    assert accepted(row, tmp_path, monkeypatch) == row["ok"], row["why"]


@pytest.mark.parametrize("kind, message", [
    ("fifo", "is a FIFO, not a regular file"),
    ("directory", "is a directory, not a regular file"),
    ("char_device", "is a character device, not a regular file"),
    ("missing", "cannot open: No such file or directory"),
    ("over_limit", "is 1048577 bytes, larger than the input limit of 1 MiB "
                   r"\(WAKEBENCH_MAX_INPUT_MIB raises it\)"),
])
def test_a_file_refused_names_itself_and_why(kind, message, tmp_path, monkeypatch):
    path = make(kind, tmp_path, monkeypatch)
    with pytest.raises(inputs.InputError, match=f"^{path}: not a readable config \\({message}\\)$"):
        inputs.load_json(path, "config")


@pytest.mark.parametrize("text, message", [
    ("[" * 129 + "]" * 129, "invalid JSON at byte 128: nested deeper than 128 levels"),
    ('{"a": [1, 2', "invalid JSON at byte 11 (end of file: truncated?): "),
    ('{"a": 1, "a": 2}', 'invalid JSON: duplicate key "a"'),
    ("[1e999]", "invalid JSON: number overflow parsing '1e999'"),
    ("[NaN]", "invalid JSON: NaN is not a number"),
    (b'["\xff"]', "invalid JSON at byte 2: not UTF-8"),
])
def test_a_document_refused_says_where_in_one_line(text, message):
    with pytest.raises(inputs.InputError) as e:
        inputs.parse_json(text, "result set", "r.json")
    assert str(e.value).startswith(f"r.json: not a readable result set ({message}")


def test_the_size_limit_comes_from_the_environment_or_is_refused_in_one_line(monkeypatch):
    monkeypatch.delenv(inputs.MAX_ENV, raising=False)
    assert inputs.max_input_bytes() == 256 << 20
    monkeypatch.setenv(inputs.MAX_ENV, "1024")
    assert inputs.max_input_bytes() == 1 << 30
    for bad in ("0", "-1", "1.5", "x", "", "1048577", "\u0661"):
        monkeypatch.setenv(inputs.MAX_ENV, bad)
        with pytest.raises(inputs.InputError, match=r"^WAKEBENCH_MAX_INPUT_MIB \"[^\n]*\": "
                                                    r"expected a whole number of MiB in \[1, "):
            inputs.max_input_bytes()


def test_names_and_text_refused_name_the_place_with_the_value_escaped():
    with pytest.raises(inputs.InputError, match=r'^cases\[0\].name "a\\tb" has a character '):
        inputs.check_name("cases[0].name", "a\tb")
    doc = {"environment": {"cpu": {"model": "x\x1b[2J"}}, "topology": {"xml": "<a>\n</a>"}}
    with pytest.raises(inputs.InputError,
                       match=r'^environment.cpu.model "x\\u001b\[2J" has a control character$'):
        inputs.check_texts(doc, skip=("topology.xml",))
    inputs.check_texts({"topology": {"xml": "<a>\n</a>"}}, skip=("topology.xml",))
    assert inputs.json_text("\x7f\x85") == '"\\u007f\\u0085"'


def test_stdin_is_read_as_dash(tmp_path):
    path = tmp_path / "in.json"
    path.write_text('{"a": 1}')
    code = "from wblab import inputs; print(inputs.load_json('-', 'config'))"
    with open(path) as stdin:
        p = subprocess.run([sys.executable, "-c", code], stdin=stdin, capture_output=True,
                           text=True, cwd=REPO / "runners/lab", timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (0, "{'a': 1}\n", "")
