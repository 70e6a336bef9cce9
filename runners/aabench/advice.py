"""Advice that decides (docs/aa-benchmark.md#aa-benchmark-of-compare, mode `advice`): pure
functions, tested by tests/aa/test_advice.py; aabench/__main__.py runs wakebench.

A run-level comparison (runs.py: per trial the streams A, B and the 10 % shift S, R runs each)
leaves cases UNKNOWN, and compare's JSON names for each how many runs a side would decide it
(`needed`: the runs of each side in all, of `needed_repetitions_per_run` repetitions each) and for
which verdict (`needed_for`). The mode follows that advice within a budget: a case advised k runs
of n repetitions is compared again on k runs a side, each of at least n repetitions: the first k
when the first runs have n or more (new runs added after them), else k new runs after the first
ones; the new runs of a trial run at the largest advised repetitions of its followed cases. It
counts as decided the right way when A/A is SAME (not DIFFERENT at least) and the 10 % shift
DIFFERENT and slower.
"""

from runners.aabench import core, runs

SIDES = {"aa": ("a", "b"), "shift": ("a", "s")}
KINDS = {"aa": "A/A", "shift": "10%"}

# The goals (issue: advice that decides), over the followed cases.
MIN_FOLLOWED = 20   # at least this many counted cases of each kind
MIN_RIGHT = 0.80    # this share of them decided the right way (the shift DIFFERENT slower,
#                     A/A SAME), and no trial with more than core.MAX_AA_DIFFERENT case DIFFERENT

MIN_BUDGET_RUNS = 2  # one more run on both sides of a comparison
MAX_BUDGET_RUNS = 100000
BUDGET_FORMS = "seconds (600 or 600s) or runs (40runs)"


def parse_budget(text):
    """(amount, "s" or "runs") of a --budget: `600` or `600s` seconds in [1, 1e6], `40runs` a
    whole number of runs in [MIN_BUDGET_RUNS, MAX_BUDGET_RUNS]. ValueError with the phrase that
    refuses it."""
    t = str(text).strip().lower()
    unit = "runs" if t.endswith("runs") else "s"
    number = t[:-4] if unit == "runs" else (t[:-1] if t.endswith("s") else t)
    try:
        amount = int(number) if unit == "runs" else float(number)
    except ValueError:
        raise ValueError(f"--budget {text}: not {BUDGET_FORMS}") from None
    if unit == "runs" and not MIN_BUDGET_RUNS <= amount <= MAX_BUDGET_RUNS:
        raise ValueError(f"--budget {text}: not a number of runs in "
                         f"[{MIN_BUDGET_RUNS}, {MAX_BUDGET_RUNS}]")
    if unit == "s" and not 1 <= amount <= 1e6:  # NaN too
        raise ValueError(f"--budget {amount}: not a number of seconds in [1, 1000000]")
    return amount, unit


def budget_text(amount, unit):
    return f"{amount} runs" if unit == "runs" else f"{amount:.0f} s"


def candidates(trial, kind, verdicts, have, idents=None, reps=None):
    """The UNKNOWN cases of one comparison at `have` runs a side of `reps` repetitions (kind "aa"
    or "shift"; `verdicts` core.case_verdicts, restricted to `idents` when given): [{"trial",
    "kind", "ident", "at" (have), "change_pct", "advised" (compare's needed, None: no advice),
    "per_run", "for", "first", "runs"}]: the case is followed on runs first .. first + runs - 1
    of each side (0 .. max(advised, have) - 1; have .. have + advised - 1, new runs only, when the
    first runs have fewer repetitions than advised)."""
    out = []
    for ident, v in sorted(verdicts.items()):
        if v["verdict"] != "UNKNOWN" or (idents is not None and ident not in idents):
            continue
        n, per_run = v.get("needed"), v.get("per_run")
        fresh = bool(n and per_run and reps and per_run > reps)
        out.append({"trial": trial, "kind": kind, "ident": ident, "at": have,
                    "change_pct": v.get("change_pct"), "advised": n, "per_run": per_run,
                    "for": v.get("needed_for"), "first": have if fresh else 0,
                    "runs": (n if fresh else max(n, have)) if n else None})
    return out


def upto(c):
    """The runs a side the case needs present: its last run's index + 1."""
    return c["first"] + c["runs"]


def targets(followed, have):
    """{trial: {"runs": {stream: runs}, "reps": repetitions a new run or None}} that `followed`
    needs: each stream brought to the largest advised runs of the cases it serves (at least
    `have`); the new runs of a trial at the largest advised repetitions of its cases that add
    runs (None: as the runs before)."""
    out = {}
    for c in followed:
        t = out.setdefault(c["trial"], {"runs": dict.fromkeys(runs.STREAMS, have), "reps": None})
        for s in SIDES[c["kind"]]:
            t["runs"][s] = max(t["runs"][s], upto(c))
        if c["per_run"] and upto(c) > have:
            t["reps"] = max(t["reps"] or 0, c["per_run"])
    return out


def cost(tg, have, run_cost):
    """What the targets' new runs cost: run_cost(repetitions of the run or None) each."""
    return sum((n - have) * run_cost(t["reps"]) for t in tg.values() for n in t["runs"].values())


def follow_order(c):
    return (upto(c), c["per_run"] or 0, c["trial"], c["kind"], c["ident"])


def plan(cands, have, limit, run_cost):
    """Which advised cases the budget follows: fewest runs first, each taken while the new runs of
    all taken so far cost at most `limit` (run_cost as cost()). {"followed", "cut" (beyond the
    budget), "no_advice", "targets", "cost"}."""
    followed, cut = [], []
    for c in sorted((c for c in cands if c["runs"]), key=follow_order):
        if cost(targets(followed + [c], have), have, run_cost) <= limit + 1e-9:
            followed.append(c)
        else:
            cut.append(c)
    tg = targets(followed, have)
    return {"followed": followed, "cut": cut, "no_advice": [c for c in cands if not c["runs"]],
            "targets": tg, "cost": cost(tg, have, run_cost)}


def extension_order(tg, have):
    """[(trial, stream, i)] of the new runs: run index first, so that the cases advised the fewest
    runs are complete first, then trial, then stream (A, B, S alternated as runs.trial_order)."""
    last = max((n for t in tg.values() for n in t["runs"].values()), default=have)
    return [(t, s, i) for i in range(have, last) for t in sorted(tg) for s in runs.STREAMS
            if tg[t]["runs"][s] > i]


def reached(followed, present):
    """(reached, not) of `followed` by the runs present {trial: {stream: n}}: both streams of a
    case hold its runs (not, when the budget was spent before its runs all ran)."""
    ok, short = [], []
    for c in followed:
        have = present.get(c["trial"], {})
        (ok if all(have.get(s, 0) >= upto(c) for s in SIDES[c["kind"]]) else short).append(c)
    return ok, short


def seconds_per_repetition(timed):
    """Seconds a repetition of a run costs, from [(seconds, repetitions)] of timed runs; None
    when none was timed."""
    s = sum(x for x, n in timed if x > 0 and n)
    n = sum(n for x, n in timed if x > 0 and n)
    return s / n if n else None


def repetitions_of(doc):
    """The most repetitions a case of result set `doc` has: the run's repetitions."""
    return max((len(c.get("repetitions") or []) for c in doc.get("cases", [])), default=0)


def budget_line(p, amount, unit, have, note=""):
    """How the budget cut the advice, in one line (`note`: how a run's seconds were estimated)."""
    f, cut, none = p["followed"], p["cut"], p["no_advice"]
    n_runs = sum(n - have for t in p["targets"].values() for n in t["runs"].values())
    line = (f"budget {budget_text(amount, unit)}{note}: follows {len(f)} of {len(f) + len(cut)} "
            f"advised cases with {n_runs} more runs")
    if unit == "s":
        line += f" (about {p['cost']:.0f} s)"
    if cut:
        lo, hi = min(c["advised"] for c in cut), max(c["advised"] for c in cut)
        line += f"; {len(cut)} beyond it (advised {lo}-{hi} runs a side)"
    return line + (f"; {len(none)} UNKNOWN without advice (no run count decides them)"
                   if none else "")


# --- the outcome -----------------------------------------------------------------------------

def result(c, verdicts, counted=None):
    """A followed case `c` with its verdict at its advised runs (verdicts: core.case_verdicts of
    that comparison; counted: the idents that still measure a 10 % shift there): "after",
    "change_after", "needed_after" (compare's advice then) and, for the shift, "counted"."""
    v = verdicts.get(c["ident"]) or {}
    r = dict(c, after=v.get("verdict"), change_after=v.get("change_pct"),
             needed_after=v.get("needed"))
    if c["kind"] == "shift":
        r["counted"] = counted is not None and c["ident"] in counted
    return r


def right(r):
    """Decided the right way: A/A SAME; the shift DIFFERENT and slower (+ = better)."""
    if r["kind"] == "aa":
        return r["after"] == "SAME"
    return r["after"] == "DIFFERENT" and (r["change_after"] or 0.0) < 0


def counted(results, kind):
    """The results of `kind` the goals count: A/A all, the shift those still measuring 10 %."""
    return [r for r in results if r["kind"] == kind and (kind == "aa" or r.get("counted"))]


def shift_goal(results):
    cases = counted(results, "shift")
    n, hit = len(cases), sum(1 for r in cases if right(r))
    ok = n >= MIN_FOLLOWED and hit >= MIN_RIGHT * n - 1e-9
    same = sum(1 for r in cases if r["after"] == "SAME")
    return (f"10% shift followed: {core.share(hit, n)} DIFFERENT slower, {core.share(same, n)} "
            f"SAME; goal >= {MIN_RIGHT:.0%} of >= {MIN_FOLLOWED}: {core.met_text(ok)}"), ok


def aa_same_goal(results):
    cases = counted(results, "aa")
    n, same = len(cases), sum(1 for r in cases if right(r))
    diff = sum(1 for r in cases if r["after"] == "DIFFERENT")
    ok = n >= MIN_FOLLOWED and same >= MIN_RIGHT * n - 1e-9
    return (f"A/A followed: {core.share(same, n)} SAME, {core.share(n - diff, n)} not DIFFERENT; "
            f"goal >= {MIN_RIGHT:.0%} SAME of >= {MIN_FOLLOWED}: {core.met_text(ok)}"), ok


def trial_differents(results, before):
    """{trial: A/A cases DIFFERENT}: `before` {trial: DIFFERENT at the first runs (not advised)}
    plus the followed cases DIFFERENT after the advice."""
    out = dict(before)
    for r in counted(results, "aa"):
        if r["after"] == "DIFFERENT":
            out[r["trial"]] = out.get(r["trial"], 0) + 1
    return out


def aa_trials_goal(results, before):
    per = trial_differents(results, before)
    bad = sorted(t + 1 for t, n in per.items() if n > core.MAX_AA_DIFFERENT)
    ok = bool(per) and not bad
    return (f"A/A trials with > {core.MAX_AA_DIFFERENT} case DIFFERENT (first runs and followed): "
            f"{len(bad)} of {len(per)}; goal none: {core.met_text(ok)}"
            + (f" (trial {', '.join(map(str, bad))})" if bad else "")), ok


def goals(results, before):
    """(lines, met) of the three goals."""
    g = [shift_goal(results), aa_same_goal(results), aa_trials_goal(results, before)]
    return [x[0] for x in g], all(x[1] for x in g)


def shortfall(results, kind):
    """One line on the followed cases of `kind` not decided the right way: how many stayed
    UNKNOWN, and what compare names for them after the advised runs, against those runs."""
    cases = counted(results, kind)
    left = [r for r in cases if r["after"] == "UNKNOWN"]
    aims = {a: sum(1 for r in cases if r["for"] == a) for a in ("DIFFERENT", "SAME", None)}
    line = (f"{KINDS[kind]}: advice aimed at DIFFERENT {aims['DIFFERENT']}, SAME {aims['SAME']}, "
            f"either way {aims[None]}; still UNKNOWN after it {core.share(len(left), len(cases))}")
    ratios = sorted(r["needed_after"] / r["runs"] for r in left if r["needed_after"])
    if ratios:
        mid = ratios[len(ratios) // 2]
        line += (f"; compare then names {mid:.1f}x the runs followed (median; "
                 f"{ratios[0]:.1f}-{ratios[-1]:.1f}x)")
    none = len(left) - len(ratios)
    return line + (f"; {none} then without advice" if none else "")


CASE_HEAD = (f"{'trial':>5} {'kind':<4} {'case':<24} {'runs':>4} {'reps':>4} {'for':<9} "
             f"{'after':<9} {'change':>7} note")


def case_line(c, note=""):
    ch = c.get("change_after", c.get("change_pct"))
    ch = f"{ch:+.1f}%" if ch is not None else "-"
    return (f"{c['trial'] + 1:>5} {KINDS[c['kind']]:<4} {c['ident'][:24]:<24} "
            f"{c['advised'] or '-':>4} {c['per_run'] or '-':>4} {c['for'] or '-':<9} "
            f"{c.get('after') or '-':<9} {ch:>7} {note}").rstrip()[:100]


def case_table(results, p, unreached=()):
    """One line per UNKNOWN case: the runs a side and repetitions a run compare advised, for
    which verdict, and the verdict at those runs; the ones not followed say why."""
    lines = [CASE_HEAD]
    for r in sorted(results, key=follow_order):
        note = ("outside 8-12% over them" if r["kind"] == "shift" and not r.get("counted")
                else "advised <= runs present" if r["advised"] <= r["at"] and not r["first"]
                else f"on new runs {r['first'] + 1}-{upto(r)}" if r["first"] else "")
        lines.append(case_line(r, note))
    for c in sorted(p["cut"], key=follow_order):
        lines.append(case_line(c, "beyond the budget"))
    for c in sorted(unreached, key=follow_order):
        lines.append(case_line(c, "budget spent first"))
    for c in sorted(p["no_advice"], key=lambda c: (c["trial"], c["kind"], c["ident"])):
        lines.append(case_line(c, "no advice"))
    return lines


TRIAL_HEAD = (f"{'trial':>5}  {'A/A first S/D/U':<15}  {'followed':>8}  {'then S/D/U':<10}  "
              f"{'10% first D/S/U':<15}  {'followed':>8}  {'then D/S/U':<10}  {'new runs':>8}")


def sdu(n, kind):
    """"SAME/DIFFERENT/UNKNOWN" of a core.count() (the shift: DIFFERENT slower first)."""
    if kind == "aa":
        return f"{n['SAME']}/{n['DIFFERENT']}/{n['UNKNOWN']}"
    return f"{n['slower']}/{n['SAME']}/{n['UNKNOWN']}"


def after_count(results):
    return core.count({i: {"verdict": r["after"], "change_pct": r["change_after"]}
                       for i, r in enumerate(results)})


def trial_table(results, before, added):
    """One line per trial: `before` {trial: {"aa": core.count(), "shift": core.count() of the
    counted cases}} at the first runs, the followed cases and their verdicts then, and `added`
    {trial: new runs}."""
    lines = [TRIAL_HEAD]
    for t in sorted(before):
        row = f"{t + 1:>5}"
        for kind in ("aa", "shift"):
            mine = [r for r in counted(results, kind) if r["trial"] == t]
            row += (f"  {sdu(before[t][kind], kind):<15}  {len(mine):>8}  "
                    f"{sdu(after_count(mine), kind):<10}")
        lines.append(row + f"  {added.get(t, 0):>8}")
    return lines
