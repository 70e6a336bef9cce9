"""pytest tests of the A/A benchmark's pure functions (runners/aabench/core.py)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from runners.aabench.core import count_stars, scale_rtt, verdict  # noqa: E402


def result_set():
    return {"schema": "wakebench-results", "cases": [
        {"name": "a", "status": "ok", "tps": 5.0,
         "rtt_ns": {"median": 100.0, "p99": 200.0, "stddev": 10.0},
         "wakeup_ns": {"median": 40.0},
         "repetitions": [{"median": 100.0, "p90": 150, "tps": 5.0, "wakeup-median": 40.0}]},
        {"name": "b", "status": "skipped", "rtt_ns": None, "repetitions": []}]}


def test_scale_rtt_scales_round_trips_only_and_copies():
    doc = result_set()
    out = scale_rtt(doc, 1.10)
    c = out["cases"][0]
    assert abs(c["rtt_ns"]["median"] - 110) < 1e-9
    assert abs(c["rtt_ns"]["p99"] - 220) < 1e-9
    assert abs(c["repetitions"][0]["p90"] - 165) < 1e-9
    assert c["repetitions"][0]["wakeup-median"] == 40.0
    assert c["repetitions"][0]["tps"] == 5.0 and c["tps"] == 5.0
    assert c["wakeup_ns"]["median"] == 40.0
    assert doc["cases"][0]["rtt_ns"]["median"] == 100.0  # the input is untouched
    assert out["cases"][1] == doc["cases"][1]


def cell(status="ok", ratio=1.0, change=0.0, significant=False):
    return {"status": status, "ratio": ratio, "change_pct": change, "significant": significant}


def test_count_stars_counts_compared_ok_cases_and_sign():
    doc = {"rows": [
        {"cells": [cell(ratio=None), cell(ratio=1.2, change=-20.0, significant=True)]},
        {"cells": [cell(ratio=None), cell(ratio=0.8, change=20.0, significant=True)]},
        {"cells": [cell(ratio=None), cell(ratio=1.0)]},
        {"cells": [cell(ratio=None), cell(status="failed", ratio=None)]},
        {"cells": [cell(status="skipped", ratio=None), cell(status="skipped", ratio=None)]}]}
    assert count_stars(doc) == (2, 3)
    assert count_stars(doc, want_sign=-1) == (1, 3)
    assert count_stars(doc, want_sign=+1) == (1, 3)


def pair(aa, aa_floor, p105, p110, n=52):
    return {"aa": (aa, n), "aa_floor": (aa_floor, n), "power": {1.05: (p105, n), 1.10: (p110, n)}}


def test_verdict_meets_goals_with_four_clean_pairs_and_power():
    pairs = [pair(3, 0, 30, 50), pair(1, 1, 31, 49), pair(0, 0, 40, 48), pair(5, 2, 20, 47),
             pair(2, 1, 35, 50)]
    lines, met = verdict(pairs)
    assert met
    text = "\n".join(lines)
    assert "A/A: 4 of 5 pairs star <= 1 case with the noise floor (2 of 5 without it)" in text
    assert "power x1.10: 244/260 94%" in text and "met" in text
    assert "power x1.05" in text


def test_verdict_fails_on_false_alarms_or_low_power():
    _, met = verdict([pair(3, 2, 30, 50)] * 2 + [pair(0, 0, 30, 50)] * 3)
    assert not met  # 3 of 5 clean pairs
    _, met = verdict([pair(0, 0, 10, 40)] * 5)
    assert not met  # 40/52 = 77 % < 90 %
    lines, met = verdict([])
    assert not met
