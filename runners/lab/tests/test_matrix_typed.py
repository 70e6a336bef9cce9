"""The matrix's typed records (matrix_cells.py), built once: the judge (matrix_judge.py) makes the
whole matrix, the renderers (matrix_render.py, matrix_document.py) only read it, and matrix.json
keeps its layout. The verdict thresholds are the predictor's (agreement.py holds them equal)."""
import copy
import dataclasses
import datetime
import json
import re

import pytest

from wblab import REPO, LabError
from wblab.agreement import MATCH_DISTANCE, NO_PREDICTION_COVERAGE, check_thresholds
from wblab.matrix_cells import Cell, Collected, Matrix, Row, RunNote, Shift
from wblab.matrix_collect import cases_ran, other_config
from wblab.matrix_document import render_document
from wblab.matrix_judge import judge

from resultsets import predicted

ORDER = ["same-cpu", "smt-sibling", "llc"]
CASE = "pipe/threads/kernel"


def report(policy, observed, model, verdict="MATCH"):
    return {"policy": policy, "cases": [{
        "name": CASE, "mechanism": "pipe", "wake_flags": "sync", "verdict": verdict,
        "strict_agreement": 0.9, "range_agreement": 0.9, "coverage": 0.95,
        "observed": {"classes": observed}, "model": {"classes": model},
        "mainline_model": [{"smt-sibling": 1.0}]}]}


def collected(policy, observed, model, verdict="MATCH"):
    hit = {"case": CASE, "kind": "hit", "nearest": policy}
    return Cell(collected=Collected(report(policy, observed, model, verdict), pairs=(3,),
                                    round_trips=(500,), observed={CASE: observed},
                                    discriminating=(CASE,),
                                    confusion={"rows": [hit], "dropped": []}))


def draft():
    near, far = {"smt-sibling": 1.0}, {"same-cpu": 1.0}
    cells = {"smt2": {"mainline": collected("mainline", near, near),
                      "sync-pair": collected("sync-pair", far, far, "MISS"),
                      "sync-core": Cell("no kernel: not built")}}
    return Matrix(("mainline", "sync-pair", "sync-core"), ("mainline", "sync-pair", "sync-core"),
                  cells, {"mainline": {"source_version": "6.12"}}, {})


def test_the_judge_builds_rows_shifts_and_confusion_once():
    m = judge(draft(), ORDER)
    row = m.cells["smt2"]["sync-pair"].rows[CASE]
    assert row.shift == Shift(-1.0, -1.0, None, "as predicted")
    assert m.cells["smt2"]["mainline"].rows[CASE].shift is None
    assert m.cells["smt2"]["sync-core"].rows == {} and m.fidelity == () and m.aa is None
    assert set(m.confusion) == {"mainline", "sync-pair", "sync-core"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.cells["smt2"]["mainline"].rows[CASE].verdict = "MISS"


def test_rendering_changes_nothing():
    m = judge(draft(), ORDER)
    before = copy.deepcopy(m)
    text = render_document(m, datetime.datetime(2030, 1, 2, 3, 4))
    assert m == before
    assert text.startswith("Rendered 2030-01-02 03:04 UTC")
    assert render_document(m, datetime.datetime(2030, 1, 2, 3, 4)) == text
    assert f"MATCH within {MATCH_DISTANCE}; " in text and "admits 90% or more" in text
    assert "a shift under 0.1 counts as none" in text
    # The sample as the cells ran it, not a figure written into the legend.
    assert "round trips of 3 fresh pairs x 500)" in text


def test_matrix_json_keeps_its_layout():
    m = judge(draft(), ORDER, aa={"smt2": {CASE: {"smt-sibling": 1.0}}}, aa_dir="aa")
    doc = json.loads(json.dumps(m.to_json()))
    assert list(doc) == ["kernels", "columns", "cells", "kernel_meta", "cases", "fidelity", "aa",
                         "confusion"]
    assert doc["cells"]["smt2"]["sync-core"] == {"missing": "no kernel: not built"}
    cell = doc["cells"]["smt2"]["sync-pair"]
    assert list(cell) == ["pairs", "round_trips", "replay", "changes", "confusion", "rows"]
    assert list(cell["rows"][CASE]) == [
        "mechanism", "wake_flags", "verdict", "agreement", "range_agreement", "coverage",
        "observed", "model", "why", "observed_shift", "central_shift", "aa_floor", "shift"]
    assert cell["rows"][CASE]["aa_floor"] == 0.0
    assert "aa" not in judge(draft(), ORDER).to_json()


def test_a_row_without_shift_or_trace_has_no_such_keys():
    r = Row(CASE, "pipe", "sync", "MATCH", 1.0, 1.0, None, {}, {}, ("why",), trace="traced")
    assert r.to_json()["why"] == ["why"] and r.to_json()["trace"] == "traced"
    assert "observed_shift" not in r.to_json() and "uncertain" not in r.to_json()


def test_the_cases_record_gathers_who_ran_it_in_order():
    notes = [RunNote("b", "2030-01-02"), RunNote(None, None), RunNote("a", "2030-01-01"),
             RunNote("b", 5)]
    rec = cases_ran({"path": "p", "sha256": "s", "shown": "p"}, notes)
    assert rec == {"path": "p", "sha256": "s", "shown": "p", "wakebench": ["b", "a"],
                   "first_run": "2030-01-01"}
    assert other_config(rec, {"config_hash": "sha256:s"}, "c") is None
    assert "c ran another config (sha256 unknown), not p" in other_config(rec, {}, "c")


def test_the_thresholds_are_the_predictors():
    header = (REPO / "analysis" / "predict" / "predict_results.h").read_text()
    if "kMatchDistance" not in header:
        pytest.skip("no analysis/ beside this lab (an installed one)")
    defined = dict(re.findall(r"constexpr double (k\w+) = ([0-9.]+);", header))
    assert float(defined["kMatchDistance"]) == MATCH_DISTANCE
    assert float(defined["kNoPredictionCoverage"]) == NO_PREDICTION_COVERAGE
    check_thresholds(predicted({"match_distance": 0.25, "no_prediction_coverage": 0.9}),
                     "p.json")
    check_thresholds(predicted({}), "p.json")
    with pytest.raises(LabError, match="p.json: match_distance 0.3, not the lab's 0.25"):
        check_thresholds(predicted({"match_distance": 0.3}), "p.json")


def test_source_date_epoch_sets_the_rendering_time(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796275500")  # 2026-12-03 05:25 UTC
    assert render_document(judge(draft(), ORDER)).startswith("Rendered 2026-12-03 05:25 UTC")
