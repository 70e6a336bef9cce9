"""The lab's one reader of the policy predictions and of a case's trace (wblab/predictions.py):
committed blocks typed (schema 4's `cases`, the older `mechanisms`, a set from before the verdict
words), the `unavailable` forms, and malformed input refused in one line naming the key path."""
import copy
import json
from pathlib import Path

import pytest

from wblab import REPO, LabError, predictions, resultset

from resultsets import document

FIXTURES = Path(__file__).parent / "fixtures"
LAB_CELL = json.loads((FIXTURES / "2llc-sync-pair.json").read_text())  # predict + results


def test_a_schema_4_block_reads_into_its_records():
    rs = resultset.load(FIXTURES / "pmu/power10-pseries-tcg.json")
    p = rs.predictions
    assert (p.unavailable, p.emulated, p.match_distance, p.no_prediction_coverage) == \
        (None, True, 0.25, 0.9)
    assert p.topology == "live:wakebench-lab-power10-smt8-emulated" and len(p.domains) == 32
    assert p.domains[0] == predictions.Domain(0, 0, "SMT", "0-7", True)
    e = p.cases[0]
    assert (e.case, e.mechanism, e.mode, e.placement, e.wake_flags, e.start, e.allowed) == \
        ("pipe/threads", "pipe", "threads", "kernel", "sync", (0, 1), "all")
    assert e.measured is None and e.consistent_with == ()
    assert ("mainline", "sync-2017") in e.discriminates and e.discriminates_native is None
    main = e.policy("mainline")
    assert (main.classes, main.cpus, main.settled, main.coverage) == \
        ({"smt-sibling": 1.0}, (0, 1), True, 0.053)
    assert (main.verdict, main.distance, main.uncertain, main.alternatives) == \
        (None, None, False, ())
    assert e.policy("no-such-policy") is None
    assert [g.name for g in e.groups] == ["mainline/sync-pair/sync-core/sync-core-v2",
                                          "sync-2017/current-cpu"]
    assert e.groups[1].policies == ("sync-2017", "current-cpu")


def test_predict_json_reads_with_its_measured_trace():
    p = predictions.parse(LAB_CELL["predict"])
    e = p.cases[0]
    assert (e.measured.status, e.groups[0].distance) == \
        ("ok", predictions.Distance(strict=0.001))
    t = e.measured.trace
    assert (t.counted, t.wakeups, t.dropped, t.moved, t.first_moves) == (True, 14578, 0, 0, None)
    assert t.paths == {"queued_remote": 1, "selection": 14576, "ttwu_runnable": 1}
    assert t.classes_by_path["selection"]["same-cpu"] == 14557


def test_an_older_mechanisms_block_reads():
    """Schema 3 kept the entries under `mechanisms`; schema 2's carry no `case`, a sentence
    `verdict`, a bare number as a group's `distance` and a null `consistent_with`."""
    v3 = resultset.load(FIXTURES / "pmu/neoverse-n1-icount0.json").predictions
    assert [e.case for e in v3.cases][:2] == ["pipe/threads", "pipe/threads/work=20000ns"]
    v2 = resultset.load(REPO / "tests/fixtures/results/report-sample.json")
    assert v2.schema_version == 2
    e = v2.predictions.cases[0]
    assert (e.case, e.mechanism, e.mode, e.placement) == (None, "pipe", "processes", "kernel")
    assert (e.groups[0].distance, e.consistent_with, v2.predictions.match_distance) == \
        (None, None, None)
    assert e.measured.histogram == {"llc": 70000, "same-cpu": 30000}
    assert e.measured.migrations == {"wakee": 1500, "waker": 1200}


def test_the_unavailable_forms_read_as_such():
    assert predictions.parse({"unavailable": "no topology"}) == \
        predictions.Predictions(unavailable="no topology")
    assert predictions.parse(None) is None
    assert predictions.parse_trace({"unavailable": "no tracefs"}).counted is False
    assert predictions.parse_trace(None) is None


def test_a_traced_case_reads_into_its_trace():
    rs = resultset.load(REPO / "tests/fixtures/predict/results-box-c.json")
    t = next(c.trace for c in rs.cases if c.trace)
    assert (t.wakeups, t.moved, t.migrations, t.foreign, t.stacked) == \
        (40000, 80, (80, 1), (0, 0), (0, 0))
    assert (t.moved_by_class, t.since_switch_out_us, t.first_moves) == (None, None, None)
    full = predictions.parse_trace({
        "paths": {"selection": 3}, "foreign": {"wakeups": 5, "moved": 1},
        "since_switch_out_us": {"kept": {"n": 0}, "moved": {"n": 2, "p5": 1, "p50": 2, "p95": 3}},
        "first_moves": [{"run": 0, "wake": 3, "waker_cpu": 0, "from": 2, "to": 1,
                         "path": "selection"}]})
    assert full.foreign == (5, 1)
    assert full.since_switch_out_us["kept"] == predictions.Spread(0, None, None, None)
    assert full.first_moves == (predictions.Move(0, 3, 0, 2, 1, "selection"),)


def test_a_cause_writes_back_as_predict_wrote_it():
    cause = {"busy": 1, "kind": "busy-prev", "text": "a wake from CPU 0 finds CPU 1 busy",
             "waker": 0}
    block = {"cases": [{"mechanism": "pipe", "mode": "threads", "policies": {"mainline": {
        "classes": {"llc": 1.0}, "verdict": "EXPLAINED",
        "uncertain": {"alternatives": [{"cause": cause, "classes": {"llc": 1.0}, "cpus": [0]}]},
        "explained_by": [{"alternative": 0, "cause": cause, "weight": 0.4}]}}}]}
    model = predictions.parse(block).cases[0].policy("mainline")
    assert model.alternatives[0].cause.to_json() == cause
    assert model.explained_by[0].to_json() == {"alternative": 0, "cause": cause, "weight": 0.4}


BLOCK = {"cases": [{"case": "pipe/threads/kernel", "mechanism": "pipe", "mode": "threads",
                    "placement": "kernel", "policies": {"mainline": {"classes": {"llc": 1.0}}},
                    "groups": [{"name": "mainline", "policies": ["mainline"]}],
                    "measured": {"status": "ok", "classes": {"llc": 1.0},
                                 "trace": {"paths": {"selection": 1}}},
                    "discriminates": [["mainline", "sync-pair"]]}]}


def entry(d):
    return d["cases"][0]


@pytest.mark.parametrize("edit, message", [
    (lambda d: entry(d)["policies"]["mainline"].update(classes=[]),  # a wrong type
     "predictions.cases[0].policies.mainline.classes: expected an object"),
    (lambda d: entry(d)["policies"]["mainline"]["classes"].update(llc="1"),
     "predictions.cases[0].policies.mainline.classes.llc: expected a number"),
    (lambda d: entry(d).pop("mechanism"),  # a required key
     'predictions.cases[0]: missing "mechanism"'),
    (lambda d: entry(d)["groups"][0].pop("name"), 'predictions.cases[0].groups[0]: missing "name"'),
    (lambda d: d["cases"].append(7),  # an entry that is no object
     "predictions.cases[1]: expected an object"),
    (lambda d: d.update(mechanisms=d.pop("cases") + ["x"]),
     "predictions.mechanisms[1]: expected an object"),
    (lambda d: d.update(cases={}), "predictions.cases: expected an array"),
    (lambda d: entry(d).update(discriminates=[["mainline", 7]]),
     "predictions.cases[0].discriminates[0][1]: expected a string"),
    (lambda d: entry(d)["measured"]["trace"].pop("paths"),
     'predictions.cases[0].measured.trace: missing "paths"'),
    (lambda d: entry(d)["measured"].update(trace={"paths": {"selection": 1.5}}),
     "predictions.cases[0].measured.trace.paths.selection: expected an integer"),
    (lambda d: d.update(schema="wakebench-results"),  # a document of another schema
     'predictions: a "wakebench-results" document, not predictions'),
    (lambda d: d.update(emulated="yes"), "predictions.emulated: expected a boolean"),
])
def test_a_malformed_block_is_refused_in_one_line_naming_the_key(edit, message):
    block = copy.deepcopy(BLOCK)
    predictions.parse(copy.deepcopy(block))
    edit(block)
    with pytest.raises(ValueError) as e:
        predictions.parse(block)
    assert str(e.value) == message
    # Read with a set, the set's reader names the file first (an entry that is no object meets
    # the name rules first, in the C++ reader's words: "predictions.cases[1] is not an object").
    with pytest.raises(LabError, match=r"^set.json: predictions(\.|: )[^\n]+$"):
        resultset.parse(document([], version=4, predictions=block), "set.json")


def test_a_case_trace_is_refused_naming_the_case():
    doc = document([{"trace": {"paths": {"selection": 1}, "first_moves": [{"run": 0}]}}])
    with pytest.raises(LabError, match=r'^set.json: cases\[0\].trace.first_moves\[0\]: missing '
                                       '"wake"$'):
        resultset.parse(doc, "set.json")


def test_predict_json_is_read_by_the_input_rules(tmp_path):
    path = tmp_path / "predict.json"
    path.write_text(json.dumps(BLOCK))
    assert predictions.load(path).cases[0].case == "pipe/threads/kernel"
    path.write_text('{"schema": "wakebench-compare"}')
    with pytest.raises(LabError, match=f"^{path}: predictions: a \"wakebench-compare\" document"):
        predictions.load(path)
    with pytest.raises(LabError, match=f"^{tmp_path / 'none.json'}: not a readable predictions"):
        predictions.load(tmp_path / "none.json")
