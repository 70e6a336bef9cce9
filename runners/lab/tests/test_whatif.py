"""wblab/whatif.py: the predicted mixes read from replay's JSON, held against measured shares."""
import pytest

from wblab import LabError, whatif

MIXES = [{"policy": "mainline", "classes": {"llc": 90, "same-cpu": 10}},
         {"policy": "sync-2017", "classes": {"same-cpu": 100}}]
DIFF = {"cases": [
    {"case": "pipe/threads/kernel", "closed_mixes": MIXES,
     "mixes": [{"policy": "kernel", "classes": {"llc": 90, "same-cpu": 10}}] + MIXES},
    {"case": "pipe/processes/kernel", "closed_mixes": [
        {"policy": "sync-2017", "classes": {"same-cpu": 60, "llc": 40}}],
     "mixes": [{"policy": "sync-2017", "classes": {"llc": 100}}]}]}


def test_predicted_reads_each_cases_closed_loop_mixes_as_shares():
    pred = whatif.predicted(DIFF)
    assert pred["pipe/threads/kernel"]["sync-2017"] == {"same-cpu": 1.0}
    assert pred["pipe/processes/kernel"]["sync-2017"] == {"same-cpu": 0.6, "llc": 0.4}
    assert "kernel" not in pred["pipe/threads/kernel"]
    first = whatif.predicted(DIFF, "mixes")
    assert first["pipe/threads/kernel"]["kernel"] == {"llc": 0.9, "same-cpu": 0.1}
    assert first["pipe/processes/kernel"]["sync-2017"] == {"llc": 1.0}
    assert whatif.class_shares({}) == {} and whatif.class_shares({"llc": 0}) == {}


def test_a_policy_that_stacks_as_predicted_meets_the_goal():
    measured = {"sync-2017": {"pipe/threads/kernel": {"same-cpu": 0.95, "llc": 0.05},
                              "pipe/processes/kernel": {"same-cpu": 0.55, "llc": 0.45}}}
    table = whatif.rows(whatif.predicted(DIFF), measured)
    assert [round(r["tv"], 2) for r in table] == [0.05, 0.05]
    assert whatif.verdicts(table) == {"sync-2017": {"cases": 2, "within": 2, "met": True}}
    text = whatif.render(table, whatif.verdicts(table))
    assert text.startswith("sync-2017: goal met: 2 of 2 cases within TV 0.15 (goal 80%)")
    assert "MATCH sync-2017" in text and "MISS" not in text


def test_mainlines_own_shares_held_as_another_policys_fail():
    """A setting that did not move the pair (mainline's placements labelled sync-2017) must
    contradict the prediction."""
    measured = {"sync-2017": {"pipe/threads/kernel": {"llc": 0.9, "same-cpu": 0.1},
                              "pipe/processes/kernel": {"llc": 1.0}}}
    table = whatif.rows(whatif.predicted(DIFF), measured)
    assert [round(r["tv"], 2) for r in table] == [0.6, 0.9]
    v = whatif.verdicts(table)["sync-2017"]
    assert v == {"cases": 2, "within": 0, "met": False}
    assert [r["word"] for r in table] == ["MISS", "MISS"]


def test_cases_without_both_sides_are_not_rows():
    measured = {"sync-2017": {"other/case": {"llc": 1.0}, "pipe/threads/kernel": {}},
                "sync-pair": {"pipe/threads/kernel": {"same-cpu": 1.0}}}
    assert whatif.rows(whatif.predicted(DIFF), measured) == []
    assert whatif.verdicts([]) == {}


def test_a_set_argument_must_name_a_lab_policy():
    with pytest.raises(LabError, match="want POLICY=SET"):
        whatif.parse_args(["m.json", "nosuch=x.json"])
    with pytest.raises(LabError, match="want POLICY=SET"):
        whatif.parse_args(["m.json", "sync-2017="])
    assert whatif.parse_args(["m.json", "sync-2017=a.json"]).measured == {"sync-2017": "a.json"}


def test_a_saved_diff_is_read_instead_of_replaying(tmp_path):
    saved = tmp_path / "diff.json"
    saved.write_text('{"cases": [')
    args = whatif.parse_args(["m.json", "sync-2017=a.json", "--diff-json", str(saved)])
    assert args.diff_json == str(saved)
    with pytest.raises(LabError, match="diff.json: not a readable"):
        whatif.main(["m.json", "sync-2017=a.json", "--diff-json", str(saved)])
