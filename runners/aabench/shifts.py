"""Shifts the machine makes: a case's `work_ns` chosen to add 5 % or 10 % to its round trip, the
shifted config and result sets, and which measured shifts count (pure functions; tested by
tests/aa/test_aabench.py).

A case is named here by its ident, mechanism/mode/placement[/pairN]: its name without the work
knob (`/work=<n>ns`), which is also compare's row without its knobs. The power config's cases
set no other knob, so ident and name agree on the unshifted set.
"""

import copy
import re
import statistics

from runners.aabench.core import InputError

SHIFTS = (0.05, 0.10)
# Only a measured shift inside one of these windows counts as that shift.
WINDOWS = {0.05: (0.04, 0.06), 0.10: (0.08, 0.12)}
# A kernel-placed case whose observed class shares moved by more than this many share points
# between the A set and the shifted set changed where it runs, not only how long it works.
MAX_SHARE_MOVE_PTS = 5.0

WORK_SUFFIX = re.compile(r"/work=\d+ns")


def ident(name):
    return WORK_SUFFIX.sub("", name)


def cases_by_ident(doc):
    return {ident(c["name"]): c for c in doc.get("cases", [])}


def median_rtt(case):
    if not case or case.get("status") != "ok":
        return None
    m = (case.get("rtt_ns") or {}).get("median")
    return float(m) if isinstance(m, (int, float)) and m > 0 else None


def work_ns_for(median_ns, shift, read_ns=0.0):
    """The work_ns that adds `shift` (0.10 = 10 %) to a round trip of median `median_ns`.

    The rule (common/measure/ping_pong.cpp, docs/configs.md#mechanisms, "Knobs"): each side runs the
    busy loop once per round trip inside the waker's timed window, the waker before it sends and the wakee after it
    wakes and before it answers; in a ping-pong the two never overlap, so one round trip gains 2 x
    work_ns. The waker also takes one more timer read per round trip when there is work (the stamp
    after its work), `read_ns` (environment.timer.read_ns). So
    work_ns = (shift x median - read_ns) / 2, at least 1. The shift run checks it: its measured
    shift is printed against the intended one.
    """
    return max(1, int(round((shift * median_ns - read_ns) / 2.0)))


def work_plan(a_doc, shifts=SHIFTS):
    """{shift: {ident: work_ns}} for every ok case of the A set."""
    read_ns = float(((a_doc.get("environment") or {}).get("timer") or {}).get("read_ns") or 0.0)
    plan = {s: {} for s in shifts}
    for name, case in cases_by_ident(a_doc).items():
        m = median_rtt(case)
        if m is None:
            continue
        for s in shifts:
            plan[s][name] = work_ns_for(m, s, read_ns)
    return plan


def entry_ident(entry, where):
    lists = [entry.get(k) for k in ("mechanisms", "modes", "placements")]
    if not all(isinstance(x, list) and len(x) == 1 for x in lists):
        raise InputError(f"{where}: each case entry must name one mechanism, mode and placement "
                         "(a shifted copy gives each case its own work_ns)")
    params = entry.get("params") or {}
    if any(k != "work_ns" and isinstance(v, list) and len(v) != 1 for k, v in params.items()):
        raise InputError(f"{where}: a case entry with a knob sweep is more than one case")
    return "/".join(x[0] for x in lists)


def shift_config(config, work, suffix):
    """A copy of the config whose case entries each get params.work_ns [work[ident]]; entries
    with no work (the case failed in the A set) are dropped. `suffix` goes onto its name."""
    out = copy.deepcopy(config)
    entries = []
    for i, entry in enumerate(out.get("cases", [])):
        name = entry_ident(entry, f"config case {i + 1}")
        if name not in work:
            continue
        entry.setdefault("params", {})["work_ns"] = [int(work[name])]
        entries.append(entry)
    if not entries:
        raise InputError("no case of the config has a work_ns (no ok case in the A set?)")
    out["cases"] = entries
    out["name"] = f"{out.get('name', 'config')}-{suffix}"
    return out


def with_work(doc, work):
    """A copy of result set `doc` whose cases claim params.work_ns = work[ident] (0 when absent)
    and the name that goes with it, so compare pairs them with a set run with that work. A
    relabelling only: every measured figure is left alone. Used to compare a shifted set with its
    A set (both labelled work 0) and as --until-decided's baseline (the A set labelled as the
    shifted run)."""
    out = copy.deepcopy(doc)
    names = {}
    for case in out.get("cases", []):
        base = ident(case["name"])
        w = int(work.get(base, 0))
        new = base + (f"/work={w}ns" if w else "")
        names[case["name"]] = new
        case["name"] = new
        if isinstance(case.get("params"), dict):
            case["params"]["work_ns"] = w
    for b in out.get("benchmarks", []):
        for k in ("name", "run_name"):
            v = b.get(k)
            if isinstance(v, str):
                for old, new in names.items():
                    if v == old or v.startswith(old + "_"):
                        b[k] = new + v[len(old):]
                        break
    return out


def measured_shift(a_case, b_case):
    """The shifted case's median RTT against the A case's, as a fraction (+ = slower)."""
    a, b = median_rtt(a_case), median_rtt(b_case)
    return None if a is None or b is None else b / a - 1.0


def shift_class(measured):
    """0.05 or 0.10 when the measured shift lies in that shift's window, else None."""
    if measured is None:
        return None
    for s, (lo, hi) in WINDOWS.items():
        if lo <= measured <= hi:
            return s
    return None


def class_shares(case):
    """{class: share} of a kernel-placed case's observed round trips, None when not observed."""
    hist = ((case or {}).get("observed") or {}).get("histogram")
    if not isinstance(hist, dict):
        return None
    n = sum(v for v in hist.values() if isinstance(v, (int, float)))
    return {k: v / n for k, v in hist.items()} if n else None


def share_move_pts(a_case, b_case):
    """The largest move of one class's share between the two cases, in share points; None when
    either is not kernel-placed (no observed histogram)."""
    a, b = class_shares(a_case), class_shares(b_case)
    if a is None or b is None:
        return None
    return 100.0 * max(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b))


def classify(a_doc, b_doc, intended, work=None):
    """One record per case of the shifted set `b_doc` (run with `intended`, e.g. 0.10): ident,
    intended, work_ns, measured, moved_pts, cls (0.05, 0.10 or None) and why (the reason it is
    excluded, "" when counted)."""
    a_cases = cases_by_ident(a_doc)
    out = []
    for name, b in cases_by_ident(b_doc).items():
        a = a_cases.get(name)
        m = measured_shift(a, b)
        moved = share_move_pts(a, b)
        rec = {"ident": name, "intended": intended, "measured": m, "moved_pts": moved,
               "work_ns": (work or {}).get(name, ((b.get("params") or {}).get("work_ns"))),
               "cls": None, "why": ""}
        if m is None:
            rec["why"] = "not ok in both sets"
        elif moved is not None and moved > MAX_SHARE_MOVE_PTS:
            rec["why"] = f"class shares moved {moved:.0f} pts"
        elif shift_class(m) is None:
            rec["why"] = "outside 4-6/8-12%"
        else:
            rec["cls"] = shift_class(m)
        out.append(rec)
    return out


def excluded_counts(records):
    """{"shares moved": n, "outside windows": n, "failed": n} over classify() records."""
    n = {"shares moved": 0, "outside windows": 0, "failed": 0}
    for r in records:
        if r["cls"] is not None:
            continue
        key = ("shares moved" if "shares" in r["why"] else
               "outside windows" if "outside" in r["why"] else "failed")
        n[key] += 1
    return n


def rule_check(records):
    """Median of measured / intended shift over the pinned cases (no class shares): how well
    work_ns_for's rule lands; None when there are none."""
    r = [rec["measured"] / rec["intended"] for rec in records
         if rec["measured"] is not None and rec["moved_pts"] is None and rec["intended"]]
    return statistics.median(r) if r else None


def shift_table(records, verdicts):
    """One line per classified record with its verdict (verdicts: {ident: {"verdict", ...}})."""
    lines = [f"{'case':<26} {'shift':>5} {'work_ns':>7} {'measured':>8} {'moved':>5} "
             f"{'class':>5} {'verdict':<9} excluded"]
    for r in records:
        v = (verdicts.get(r["ident"]) or {}).get("verdict") or "-"
        m = f"{100 * r['measured']:+.1f}%" if r["measured"] is not None else "-"
        mv = f"{r['moved_pts']:.0f}" if r["moved_pts"] is not None else "-"
        cls = f"{100 * r['cls']:.0f}%" if r["cls"] is not None else "-"
        lines.append(f"{r['ident'][:26]:<26} {100 * r['intended']:>4.0f}% {r['work_ns'] or 0:>7} "
                     f"{m:>8} {mv:>5} {cls:>5} {v:<9} {r['why']}"[:100].rstrip())
    return lines
