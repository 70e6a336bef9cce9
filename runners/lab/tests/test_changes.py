"""wblab/changes.py: a mutation's verdict from its marks, the floor per preset and the table, on
summaries as `wakebench replay --changed mainline --json` gives them."""
import json
from pathlib import Path

from wblab import changes


def summary(records=100000, split=0, marked=0, found=0, expected=None):
    out = {"a": "mainline", "b": "kernel", "records": records, "split": split, "moved": split,
           "by_point": {"cpu": split} if split else {}, "by_rule": {}, "by_state": {},
           "by_classes": {}, "cost_ns": None, "marked": marked, "marked_changed": found,
           "first": [], "cases": []}
    if expected:
        out["expected"] = expected
    return out


def test_a_mutation_meets_its_goal_only_with_its_marks_found_and_nothing_outside():
    assert changes.marks_verdict(summary(split=500, marked=500, found=500)).startswith(
        "goal met (100.00% of the marked found, 0.00% outside)")
    # 98% of the marked found: missed; 60 changed outside the marks of 100,000: missed.
    assert changes.marks_verdict(summary(split=490, marked=500, found=490)).startswith(
        "goal missed")
    assert changes.marks_verdict(summary(split=560, marked=500, found=500)).startswith(
        "goal missed")
    assert changes.marks_verdict(summary(split=550, marked=500, found=500)).startswith(
        "goal met")
    assert changes.marks_verdict(summary(split=99, marked=99, found=99)) == \
        "too few marked (99 < 100)"
    assert changes.marks_verdict(summary(split=5)) == "-"


def test_the_floor_is_mainlines_own_cell_per_preset():
    cells = [("smt2", "gated:mainline", summary(split=10)),
             ("smt2", "patch:neutral", summary(split=12)),
             ("smt2", "patch:x", summary(split=2010)),
             ("2llc", "patch:x", summary(split=3))]
    assert changes.floors(cells) == {"smt2": 0.01}
    rows = changes.table(cells)
    assert rows[2].startswith("| smt2 | gated:mainline | 100000 | 10 | 0.01% | +0.00 | ")
    assert "| 0.01% | +0.00 | " in rows[3]  # 12 of 100,000: at the floor
    assert "| 2.01% | +2.00 | " in rows[4]
    assert "| 0.00% | - | " in rows[5]  # no mainline cell on 2llc
    assert all(len(r.split("|")) == len(rows[0].split("|")) for r in rows)


def test_a_known_patch_is_held_to_its_own_models_splits_and_details_follow():
    c = summary(split=76, expected={"policy": "sync-core", "split": 67, "changed": 67})
    c["by_rule"] = {"sis_select_idle_cpu": 68, "sis_target_fallback": 8}
    c["cases"] = [{"case": "w4s4", "split": 69}, {"case": "pairs=2", "split": 7},
                  {"case": "idle", "split": 0}]
    c["first"] = [{"index": 9, "pid": 611, "point": "cpu", "mark": True,
                   "kernel": {"rule": "none", "cpu": 3}, "model": {"rule": "sis_prev", "cpu": 2}}]
    assert changes.expect_text(c) == "67: found 100.00%, 9 outside"
    lines = changes.render([("smt2", "sync-core", c),
                            ("smt2", "mainline", {"unavailable": "no records"})])
    assert "not replayed: no records" in lines[3]
    text = " ".join(lines)
    assert "mainline's rule: sis_select_idle_cpu 68, sis_target_fallback 8" in text
    assert "cases: w4s4 69, pairs=2 7." in text
    assert "- record 10 (pid 611, cpu, marked): kernel none -> 3, mainline's model sis_prev -> 2" \
        in text
    assert all(len(line) <= 100 for line in lines if not line.startswith("|"))


FIXTURE = Path(__file__).parent / "fixtures"


def test_the_section_renders_as_its_golden():
    """changes-smt2.json: `replay --changed mainline --json` of the y1 matrix's mainline and
    sibling-first cells (docs/lab-validation/y1-smt2-your-patch.md), trimmed to three cases and
    their first records; the golden is that section as matrix.md gives it."""
    data = json.loads((FIXTURE / "changes-smt2.json").read_text())
    cells = [tuple(k.split("/")) + (v,) for k, v in data.items()]
    lines = changes.render(cells)
    assert "\n".join(lines) + "\n" == (FIXTURE / "changes-smt2.md").read_text()
