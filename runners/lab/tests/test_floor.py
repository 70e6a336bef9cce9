"""`wakebench-lab floor`: two sets of one setting held case by case, in blocks of fresh pairs.
Pairs that settle all or nothing part two 1-pair blocks by TV 1 and two 4-pair blocks of the
same mix by 0; a setting that moves the wakee stays apart at any block size."""
import json

import pytest

from wblab import LabError, floor
from resultsets import typed


def rep(**round_trips):
    hist = {"bucket_bits": 4, "index": [], "count": []}
    return {"classes": {c: {"round_trips": n, "mean_ns": 1.0, "median_ns": 1.0, "hist": hist}
                        for c, n in round_trips.items()}}


def reps(settled):
    """A case whose fresh pairs settle all on one class each ("s" sibling, "l" llc)."""
    cls = {"s": "smt-sibling", "l": "llc"}
    return [rep(**{cls[k]: 100}) for k in settled]


def by_case(**cases):
    return floor.reps_by_case(typed([{"name": n, "repetitions": r} for n, r in cases.items()]))


def test_all_or_nothing_pairs_part_small_blocks_and_meet_in_large_ones():
    a = by_case(c=reps("sssl" * 2))
    b = by_case(c=reps("lsss" * 2))
    assert floor.summary(floor.blocks(a, b, 1)) == (4, 8, 1.0)
    assert floor.summary(floor.blocks(a, b, 4)) == (2, 2, 0.0)


def test_a_setting_that_moves_the_wakee_stays_apart():
    a = by_case(c=reps("ssss" * 2), d=reps("llll" * 2))
    b = by_case(c=reps("llll" * 2), d=reps("llll" * 2))
    within, total, worst = floor.summary(floor.blocks(a, b, 4))
    assert (within, total, worst) == (2, 4, 1.0)
    assert floor.shares([{"smt-sibling": 100}, {"llc": 300}]) == {"smt-sibling": 0.25, "llc": 0.75}


def test_only_cases_both_sets_hold_and_only_whole_blocks():
    a = by_case(c=reps("sss"), only_a=reps("s"))
    b = by_case(c=reps("sssss"))
    assert [case for case, _ in floor.blocks(a, b, 2)] == ["c"]
    assert "no case holds that many" in floor.render(a, b, [4])


def test_bad_input_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit):
        floor.main(["a.json", "b.json", "--pairs", "0,10"])
    assert "expected pair counts" in capsys.readouterr().err
    p = tmp_path / "pinned.json"
    p.write_text(json.dumps({"schema": "wakebench-results", "schema_version": 3, "cases": []}))
    with pytest.raises(LabError, match="no kernel-placed case in both"):
        floor.main([str(p), str(p)])
