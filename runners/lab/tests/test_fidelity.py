"""The gated kernel's settings, its read-back check and its fidelity (fidelity.py); the cases
file's record line (cases.py)."""
import json

import pytest

from wblab.cases import CaseSet, case_set_record, parse_cases, patch_sources, provenance_lines
from wblab.fidelity import ab_args, fidelity, settings, tv
from wblab.fidelity import read_back_problems as fidelity_read_back
from wblab import REPO, LabError, resultset

from resultsets import document


def test_setting_zero_is_all_off_and_each_other_turns_one_feature_on():
    assert ab_args() == ["--ab", "feature:SYNC_PAIR=off,on,off,off,off",
                         "--ab", "feature:SYNC_CORE=off,off,on,off,off",
                         "--ab", "feature:SYNC_CORE_V2=off,off,off,on,off",
                         "--ab", "feature:SYNC_2017=off,off,off,off,on"]
    rows = settings()
    assert [p for p, _ in rows] == ["mainline", "sync-pair", "sync-core", "sync-core-v2",
                                    "sync-2017"]
    assert all(sum(s.values()) == (k > 0) for k, (_, s) in enumerate(rows))


def good(k):
    _, want = settings()[k]
    return document(
        [{"name": "a", "repetitions": [{"ab": {"round": 0, "read_back": {
            f"feature:{f}": f if on else f"NO_{f}" for f, on in want.items()}}}]},
         {"name": "b", "status": "failed"}],
        ab={"id": "run", "setting": k, "settings": 5, "label": "gated", "order_seed": 1,
            "values": {f"feature:{f}": "on" if on else "off" for f, on in want.items()}})


def read_back_problems(doc, k):
    return fidelity_read_back(resultset.parse(doc, "test.json"), k)


def test_the_read_back_check_passes_the_intended_state_and_fails_every_other():
    assert read_back_problems(good(1), 1) == []
    assert read_back_problems(document(), 1) == [
        "setting 1 (sync-pair): the result set has no `ab` object"]
    assert "says setting 2 of 5, not 1 of 5" in read_back_problems(good(2), 1)[0]
    wrong = good(1)
    wrong["cases"][0]["repetitions"][0]["ab"]["read_back"]["feature:SYNC_2017"] = "SYNC_2017"
    assert read_back_problems(wrong, 1) == [
        "setting 1 (sync-pair): a repetition 0 read back SYNC_2017 SYNC_2017"]
    unread = good(0)
    del unread["cases"][0]["repetitions"][0]["ab"]
    assert "read back SYNC_PAIR None" in read_back_problems(unread, 0)[0]
    values = good(3)
    values["ab"]["values"]["feature:SYNC_CORE_V2"] = "off"
    assert "SYNC_CORE_V2 is off, not on" in read_back_problems(values, 3)[0]


def test_fidelity_allows_mainlines_own_tv_plus_the_slack():
    same, near = {"llc": 1.0}, {"llc": 0.8, "smt-sibling": 0.2}
    assert tv(same, near) == pytest.approx(0.2)
    # mainline moved 0.2 between its runs: 0.2 + 0.05 allows a TV of 0.25, not 0.3
    aa = {"a": near}
    ok = fidelity({"a": {"llc": 0.75, "smt-sibling": 0.25}}, {"a": same}, {"a": same}, aa, ["a"])
    assert ok["verdict"] == "holds"
    bad = fidelity({"a": {"llc": 0.7, "smt-sibling": 0.3}}, {"a": same}, {"a": same}, aa, ["a"])
    assert bad["verdict"] == "FAILS" and bad["cases"][0]["tv"] == 0.3
    assert fidelity({}, {}, {}, None, [])["why"] == "no A/A run (--aa)"
    # a case that discriminates nothing is not held
    assert fidelity({"a": same}, {"a": near}, {"a": same}, {"a": same}, [])["verdict"] == \
        "not tested"


def record(committed_at, first_run, unchanged=True, committed=True):
    g = {"committed": committed, "commit": "f" * 40, "committed_at": committed_at,
         "unchanged": unchanged, "why": "not tracked by git"}
    return {"git": g, "first_run": first_run, "shown": "c.json", "sha256": "0" * 64,
            "wakebench": ["abc"]}


def lines(*args, **kwargs):
    return "\n".join(provenance_lines("smt2", record(*args, **kwargs)))


def test_the_cases_line_says_whether_the_file_was_fixed_before_the_guests():
    before = lines("2030-01-01T00:00:00+01:00", "2030-01-01T00:30:00Z")
    assert before.startswith("- committed unchanged in ffffffffffff before the guests ran: smt2")
    after = lines("2030-01-01T02:00:00+01:00", "2030-01-01T00:30:00Z")
    assert after.startswith("- COMMITTED AFTER the guests ran")
    changed = lines("2030-01-01T00:00:00Z", None, unchanged=False)
    assert changed.startswith("- CHANGED since its commit ffffffffffff")
    loose = lines(None, None, committed=False)
    assert loose.startswith("- NOT COMMITTED (not tracked by git): smt2: c.json")
    assert all(len(x) <= 100 for t in (before, after, changed, loose) for x in t.splitlines())


def test_cases_go_to_every_preset_or_to_the_one_named(tmp_path):
    f = tmp_path / "c.json"
    f.write_text('{"cases": [{"mechanisms": ["pipe"], "placements": ["kernel:llc"]}]}')
    both = parse_cases([str(f)], ["smt2", "2llc"])
    assert both == {"smt2": CaseSet(f, (f,)), "2llc": CaseSet(f, (f,))}
    one = parse_cases([f"2llc={f}"], ["smt2", "2llc"])
    assert one["2llc"].path == f and one["smt2"].path.name == "smt2.json"
    with pytest.raises(LabError, match="not a readable JSON config"):
        parse_cases([f"smt2={tmp_path / 'none.json'}"], ["smt2"])
    # A patch kernel does not change what --cases names.
    assert parse_cases([f"2llc={f}"], ["2llc"], True, tmp_path)["2llc"].path == f


def test_a_patch_kernel_runs_the_searched_and_the_loaded_cases_by_default(tmp_path):
    """Issue 54 item 2: with a patch or tree kernel and no --cases, a preset runs the union of its
    searched cases and the loaded cases of its CPU count, each case with its file's run defaults;
    without one, its suite; with neither file, its suite too."""
    sets = parse_cases([], ["smt2", "2llc"], True, tmp_path)
    search, loads = REPO / "configs/lab/search/smt2.json", REPO / "configs/lab/loads-4cpu.json"
    assert sets["smt2"] == CaseSet(tmp_path / "smt2/cases.json", (search, loads))
    union = json.loads(sets["smt2"].path.read_text())
    parts = [json.loads(x.read_text()) for x in (search, loads)]
    assert len(union["cases"]) == sum(len(d["cases"]) for d in parts)
    assert union["cases"][0] == dict(parts[0]["defaults"], **parts[0]["cases"][0])
    assert union["cases"][-1] == dict(parts[1]["defaults"], **parts[1]["cases"][-1])
    assert sets["2llc"] == CaseSet(loads, (loads,))  # 2llc has no searched cases: one file
    assert parse_cases([], ["smt2"])["smt2"] == CaseSet(REPO / "configs/lab/smt2.json",
                                                        (REPO / "configs/lab/smt2.json",))
    assert patch_sources("power10-smt8") == [REPO / "configs/lab/search/power10-smt8.json"]


def test_a_union_is_recorded_by_its_sources(tmp_path):
    """The union is written by the matrix, so its git state is its sources': committed unchanged
    when all are (the latest commit named), else the first that is not."""
    sets = parse_cases([], ["smt2"], True, tmp_path)
    rec = case_set_record(sets["smt2"])
    assert rec["shown"] == "configs/lab/search/smt2.json + configs/lab/loads-4cpu.json"
    assert rec["path"] == str(tmp_path / "smt2/cases.json") and rec["git"]["unchanged"]
    assert rec["git"]["committed"], rec["git"]
    loose = tmp_path / "mine.json"
    loose.write_text(sets["smt2"].path.read_text())
    rec = case_set_record(CaseSet(sets["smt2"].path, (REPO / "configs/lab/smt2.json", loose)))
    assert rec["git"] == {"committed": False, "why": "not tracked by git"}
