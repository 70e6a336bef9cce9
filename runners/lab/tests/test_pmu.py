"""The PMU check (wblab/pmu.py) on two guests' sweeps: instructions grow by the same count per ns
of work at every step on POWER10 (pseries, TCG) and on Neoverse N1 under -icount; TCG's cycles
(virtual time) do not, and fail; so do constructed sweeps that curve or are too short."""
from dataclasses import replace
from pathlib import Path

import pytest

from wblab import LabError
from wblab.pmu import growth, judge, sweep
from wblab.resultset import load

FIXTURES = Path(__file__).parent / "fixtures"

POWER10 = load(FIXTURES / "pmu" / "power10-pseries-tcg.json")
N1 = load(FIXTURES / "pmu" / "neoverse-n1-icount0.json")


@pytest.mark.parametrize("results,event", [(POWER10, "instructions"),
                                           (POWER10, "power10::PM_INST_CMPL"),
                                           (N1, "instructions")])
def test_instructions_grow_by_a_constant_per_ns_of_work_on_both_sides(results, event):
    for side in ("waker", "wakee"):
        points = sweep(results, event, side)
        assert [w for w, _ in points] == [0, 20000, 40000, 80000]
        ok, why = judge(points)
        assert ok, why


def test_tcg_cycles_are_virtual_time_and_fail_the_check():
    for side in ("waker", "wakee"):
        ok, why = judge(sweep(POWER10, "cycles", side))
        assert not ok and why.startswith("NOT constant")


def test_the_two_encodings_of_instructions_count_the_same():
    a = dict(sweep(POWER10, "instructions", "waker"))
    b = dict(sweep(POWER10, "power10::PM_INST_CMPL", "waker"))
    assert all(abs(a[w] - b[w]) < 5 for w in a)


def test_constructed_sweeps():
    line = [(w, 1000 + 2 * w) for w in (0, 100, 200, 400)]
    assert judge(line)[0]
    curve = [(w, 1000 + w * w / 50) for w in (0, 100, 200, 400)]
    assert not judge(curve)[0]
    assert judge(line[:2]) == (False, "2 work_ns points counted: at least 3 are needed")
    flat = [(w, 1000) for w in (0, 100, 200)]
    assert judge(flat) == (False, "the count does not grow with the work")
    assert [round(r, 3) for _, _, r in growth(line)] == [2.0, 2.0, 2.0]


def test_an_event_no_case_counted_has_no_sweep_and_two_sweeps_are_refused():
    assert sweep(POWER10, "cache-misses", "waker") == []
    twice = replace(POWER10, cases=POWER10.cases + POWER10.cases[-1:])
    with pytest.raises(LabError, match="two cases with work_ns 80000"):
        sweep(twice, "instructions", "waker")
