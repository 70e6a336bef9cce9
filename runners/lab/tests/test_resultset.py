"""The lab's one reader of a result set (wblab/resultset.py) against docs/result-set.schema.json:
every committed set reads, the refused ones are refused in one line naming the file, and each
check of the schema's subset is shown able to fail. tests/result_set_schema_test.cpp holds the
C++ reader and writer to the same schema on the same files."""
import json
import os
from pathlib import Path

import pytest

from wblab import REPO, LabError, resultset

from resultsets import document

# The committed result sets: every file of these folders whose text names the schema. The ones in
# REFUSED are there to be refused (a later version, a truncated file, an overflowing version, a
# document nested deeper than the readers take, a CPU model with control characters: the input
# rules both readers hold, docs/result-set.md#input-rules); every other one must read.
FOLDERS = ("tests/fixtures", "tests/fuzz/corpus/resultset")
REFUSED = {"schema-v5.json", "truncated.json", "number-overflow.json", "nested-129.json",
           "escape-in-model.json"}
LAB_SET = json.loads((Path(__file__).parent / "fixtures/2llc-sync-pair.json").read_text())[
    "results"]


def committed():
    return sorted(p for f in FOLDERS for p in (REPO / f).rglob("*.json")
                  if '"wakebench-results"' in p.read_text(errors="replace"))


def test_every_committed_set_reads_and_the_refused_ones_do_not():
    sets = committed()
    assert len(sets) >= 14 and REFUSED <= {p.name for p in sets}
    for path in sets:
        if path.name in REFUSED:
            with pytest.raises(LabError, match=f"^{path}: [^\n]+$"):
                resultset.load(path)
        else:
            rs = resultset.load(path)
            assert rs.where == str(path) and len(rs.cases) == len(rs.doc["cases"])
    assert len(resultset.parse(LAB_SET, "2llc-sync-pair.json").cases) == 4


def test_the_records_hold_what_the_set_says():
    rs = resultset.load(REPO / "tests/fixtures/predict/results-box-c.json")
    assert (rs.schema_version, rs.complete, rs.ab, rs.topology_pus) == (1, True, None, None)
    assert isinstance(rs.topology_xml, str) and rs.environment == {}
    kernel = [c for c in rs.cases if c.kernel]
    assert kernel and all(c.placement.startswith("kernel") for c in kernel)
    ok = next(c for c in rs.cases if c.ok and c.cpus)
    assert isinstance(ok.cpus, tuple) and ok.rtt_median_ns > 0
    gated = resultset.parse(document([{"repetitions": [{"ab": {"round": 2, "read_back": {
        "feature:X": "NO_X"}}}]}], ab={"id": "i", "setting": 1, "settings": 2, "label": "X=off",
                                       "values": {"feature:X": "off"}, "order_seed": 7}), "g")
    assert gated.ab == resultset.AbSet(1, 2, {"feature:X": "off"})
    assert gated.cases[0].repetitions == (resultset.Repetition(2, {"feature:X": "NO_X"}),)
    rep = resultset.parse(document([{"repetitions": [{"median": 2290, "p99": 3664.5, "tps": None,
                                                       "marked": True}]}]), "r").cases[0]
    assert rep.repetitions == (resultset.Repetition(None, {}, {"median": 2290, "p99": 3664.5},
                                                    marked=True),)


@pytest.mark.parametrize("text, message", [
    ('{"schema": "wakebench-results", "cases": [', r"not a readable result set \(invalid JSON"),
    ('[]', 'not a wakebench result set'),
    ('{"schema": "wakebench-compare", "schema_version": 2, "cases": []}',
     'not a wakebench result set'),
    ('{"schema": "wakebench-results", "schema_version": 5, "cases": []}',
     r"schema_version 5 is not supported \(the lab reads versions 1 to 4\)"),
    ('{"schema": "wakebench-results", "schema_version": true, "cases": []}',
     "schema_version true is not supported"),
])
def test_what_is_no_readable_set_is_one_line_naming_the_file(tmp_path, text, message):
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(LabError, match=f"^{path}: {message}[^\n]*$"):
        resultset.load(path)
    with pytest.raises(LabError, match=f"^{tmp_path / 'none.json'}: not a readable result set"):
        resultset.load(tmp_path / "none.json")


# Each keyword of the schema's subset, broken once: the reader refuses the set, saying where.
@pytest.mark.parametrize("edit, message", [
    (lambda d: d["cases"][0].pop("status"), r'\$.cases\[0\]: missing "status"'),  # required
    (lambda d: d.pop("cases"), r'\$: missing "cases"'),
    (lambda d: d["cases"][0].update(name=7), r"\$.cases\[0\].name is integer, not string"),  # type
    (lambda d: d.update(complete=1), r"\$.complete is integer, not boolean"),
    (lambda d: d["cases"][0].update(status="done"),  # enum
     r'\$.cases\[0\].status is "done", not one of \["ok", "skipped", "failed"\]'),
    (lambda d: d.update(extra=1), r'\$: unknown key "extra"'),  # additionalProperties: false
    (lambda d: d["cases"][0].update(fake_groups=[]), r'\$.cases\[0\]: unknown key "fake_groups"'),
    (lambda d: d["cases"][0].update(rtt_ns={"median": "1"}),  # additionalProperties: a schema
     r"\$.cases\[0\].rtt_ns.median is string, not number or null"),
    (lambda d: d["cases"][0].update(cpuset=[0, "1"]),  # items
     r"\$.cases\[0\].cpuset\[1\] is string, not integer"),
    (lambda d: d["cases"][0].update(repetitions=[{"rtt_hist": {"bucket_bits": 7, "index": []}}]),
     r'\$.cases\[0\].repetitions\[0\].rtt_hist: missing "count"'),  # $ref
    (lambda d: d.update(decisions={"file": "f", "sha256": "s", "lines": 1.5}),
     r"\$.decisions.lines is number, not integer"),
])
def test_each_check_of_the_schema_refuses_a_set(edit, message):
    doc = document([{"cpuset": [0, 1], "repetitions": []}])
    resultset.parse(doc, "set.json")
    edit(doc)
    with pytest.raises(LabError, match=f"^set.json: {message}$"):
        resultset.parse(doc, "set.json")


def keywords(schema):
    """Every keyword the schema uses, and every $ref it makes."""
    words, refs = set(schema), [schema["$ref"]] if "$ref" in schema else []
    subs = list(schema.get("properties", {}).values()) + list(schema.get("$defs", {}).values())
    subs += [schema[k] for k in ("items", "additionalProperties") if isinstance(schema.get(k), dict)]
    for s in subs:
        w, r = keywords(s)
        words |= w
        refs += r
    return words, refs


def test_the_schema_keeps_to_the_subset_both_validators_read():
    words, refs = keywords(resultset.SCHEMA)
    assert words <= {"$schema", "$id", "title", "description", "type", "properties", "required",
                     "items", "enum", "additionalProperties", "$defs", "$ref"}
    assert refs and all(r.removeprefix("#/$defs/") in resultset.SCHEMA["$defs"] for r in refs)


def test_prediction_cases_reads_version_4s_cases_and_older_mechanisms():
    new, old = {"cases": [{"case": "a"}]}, {"mechanisms": [{"case": "b"}]}
    assert resultset.prediction_cases(new) == [{"case": "a"}]
    assert resultset.prediction_cases(old) == [{"case": "b"}]
    assert resultset.prediction_cases(None) == []


# The C++ reader's rules past the schema (docs/result-set.md#input-rules), each broken once: a
# name outside [A-Za-z0-9._:,=/+-] where the C++ reader checks names, a control character in
# free text, a median that is no positive number.
AB = {"id": "i", "setting": 0, "settings": 2, "label": "X=on", "values": {"feature:X": "on"},
      "order_seed": 7}


@pytest.mark.parametrize("cases, top, message", [
    ([{"name": "a b"}], {}, r'cases\[0\].name "a b" has a character outside'),
    ([{"mechanism": "pipe/../x"}], {}, r'cases\[0\].mechanism "pipe/../x" has an empty, "." or'),
    ([{"placement": "llc\n"}], {}, r'cases\[0\].placement "llc\\n" has a character outside'),
    ([{"params": {"payload": "1;rm"}}], {}, r'cases\[0\].params.payload "1;rm" has a char'),
    ([{"observed": {"histogram": {"l\tc": 1}}}], {},
     r'cases\[0\].observed.histogram key "l\\tc" has a character outside'),
    ([{"counters": {"waker": {"": 1.0}}}], {}, r'cases\[0\].counters.waker key "" is empty'),
    ([{"repetitions": [{"ab": {"round": 1, "read_back": {"feature:X": "a'b"}}}]}],
     {"ab": AB}, r'cases\[0\].repetitions\[0\].ab.read_back.feature:X "a\'b" has a character'),
    ([], {"ab": dict(AB, values={"feature:X": "on off"})},
     r'ab.values.feature:X "on off" has a character outside'),
    ([], {"environment": {"hostname": "h`id`"}}, r'environment.hostname "h`id`" has a character'),
    ([], {"predictions": {"cases": [{"case": "x", "models": {"my policy": {}}}]}},
     r'predictions.cases\[0\].models key "my policy" has a character outside'),
    ([{"reason": "no\x1b[2J"}], {}, r'cases\[0\].reason "no\\u001b\[2J" has a control char'),
    ([], {"environment": {"cpu": {"model": "x\x85"}}},
     r'environment.cpu.model "x\\u0085" has a control character'),
    ([{"rtt_ns": {"median": -1}}], {}, r"cases\[0\].rtt_ns.median is -1, not a positive"),
    ([{"repetitions": [{"median": 0}]}], {},
     r"cases\[0\].repetitions\[0\].median is 0, not a positive number"),
])
def test_a_set_against_the_input_rules_is_refused_saying_where(cases, top, message):
    with pytest.raises(LabError, match=f"^r.json: {message}[^\n]*$"):
        resultset.parse(document(cases, **top), "r.json")


def test_a_file_the_input_rules_refuse_is_refused_before_it_is_read(tmp_path, no_hang):
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(LabError, match=r"fifo.json: not a readable result set \(is a FIFO, "):
        resultset.load(tmp_path / "fifo.json")
    (tmp_path / "deep.json").write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(LabError, match=r"deep.json: not a readable result set \(invalid JSON at "
                                       "byte 128: nested deeper than 128 levels\\)$"):
        resultset.load(tmp_path / "deep.json")
