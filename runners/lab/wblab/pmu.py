"""Whether a guest's PMU counts what an event says: the instructions of the busy loop grow by the
same number per ns of work at every step of a work_ns sweep (the loop runs work_ns times one rate
calibrated once per run, so per ns is per iteration up to that rate). `wakebench-lab pmu SET
EVENT` prints each side's growth per step and the verdict; an event that is not instructions
(TCG's cycles, virtual time) grows otherwise and fails."""
from . import LabError, inputs
from .resultset import load

# The largest spread of the growth per ns over the steps, relative to its mean, that still counts
# as constant (the sweep's round trips are a few hundred: a few instructions of noise per step).
TOLERANCE = 0.03


def sweep(results, event, side):
    """[(work_ns, event per round trip)] of `side` over the set's ok cases that counted it, by
    work_ns (one case per work_ns: the set is one mechanism and placement swept)."""
    points = {}
    for case in results.cases:
        value = ((case.counters or {}).get(side) or {}).get(event)
        if case.ok and case.work_ns is not None and value is not None:
            if case.work_ns in points:
                raise LabError(f"{results.where}: two cases with work_ns {case.work_ns}: give one "
                               "sweep (one mechanism, mode and placement)")
            points[case.work_ns] = value
    return sorted(points.items())


def growth(points):
    """[(from_ns, to_ns, growth per ns)] between successive points."""
    return [(w0, w1, (v1 - v0) / (w1 - w0)) for (w0, v0), (w1, v1) in zip(points, points[1:])]


def judge(points, tolerance=TOLERANCE):
    """(constant?, why) for one side's sweep: at least three points (two steps), every step's
    growth per ns positive and within `tolerance` of their mean."""
    steps = growth(points)
    if len(steps) < 2:
        return False, f"{len(points)} work_ns points counted: at least 3 are needed"
    rates = [r for _, _, r in steps]
    mean = sum(rates) / len(rates)
    if mean <= 0 or min(rates) <= 0:
        return False, "the count does not grow with the work"
    spread = (max(rates) - min(rates)) / mean
    verdict = "constant" if spread <= tolerance else "NOT constant"
    return spread <= tolerance, (f"{verdict}: {mean:.4f} per ns of work, spread "
                                 f"{100 * spread:.1f} % over {len(steps)} steps (at most "
                                 f"{100 * tolerance:.0f} %)")


def main(argv):
    ap = inputs.ArgumentParser(prog="wakebench-lab pmu", description=__doc__)
    ap.add_argument("results", metavar="RESULTS.json", help="a work_ns sweep's result set")
    ap.add_argument("event", metavar="EVENT", help="the counter held to the work")
    args = ap.parse_args(argv)
    results, event = load(args.results), args.event
    ok = True
    for side in ("waker", "wakee"):
        points = sweep(results, event, side)
        good, why = judge(points)
        ok &= good
        print(f"{side}: {event} {why}")
        for w0, w1, r in growth(points):
            print(f"  work {w0}-{w1} ns: {r:.4f} per ns")
    return 0 if ok else 1
