"""The run-level design of the A/A benchmark (docs/aa-benchmark.md#aa-benchmark-of-compare, mode
`runs`): pure functions (tested by tests/aa/test_runs.py); aabench/__main__.py runs wakebench.

A trial runs three streams of the suite, alternated run by run: A (the suite), B (the suite again:
the A/A side) and S (the suite shifted by 10 %, its work_ns from A's first run). compare then takes
the first r runs of each side, for every r from 1 to the trial's runs: A against B (A/A) and A
against S (the shift), so one set of trials gives the figures at every run count. A shifted case
counts by what the runs measured: the geometric mean over its runs of S's median RTT against A's
(shifts.WINDOWS), and for a kernel-placed case the class shares of all its runs pooled.
"""

import math

from runners.aabench import core, shifts

STREAMS = ("a", "b", "s")
SHIFT = 0.10
MIN_COUNTED = 40  # the shift goal needs at least this many counted cases over the trials


def run_name(trial, stream, i):
    """The result set of run i (0-based) of one stream of one trial: "runs3-b2.json"."""
    return f"runs{trial}-{stream}{i}.json"


def trial_order(trial, runs):
    """[(stream, i)] in the order they run: a0 b0 s0 a1 b1 s1 ... (S needs A's first run)."""
    return [(s, i) for i in range(runs) for s in STREAMS]


def pooled_case(cases):
    """One case of several runs as shifts.classify reads it: status ok only when every run's is,
    the geometric mean of the runs' median RTTs, and the runs' observed histograms summed."""
    medians = [shifts.median_rtt(c) for c in cases]
    if not cases or any(m is None for m in medians):
        return {"name": cases[0]["name"] if cases else "", "status": "failed"}
    out = {"name": cases[0]["name"], "status": "ok", "params": cases[0].get("params"),
           "rtt_ns": {"median": math.exp(sum(math.log(m) for m in medians) / len(medians))}}
    hists = [shifts.class_shares(c) is not None and c["observed"]["histogram"] for c in cases]
    if all(hists):
        total = {}
        for h in hists:
            for k, v in h.items():
                if isinstance(v, (int, float)):
                    total[k] = total.get(k, 0) + v
        out["observed"] = {"histogram": total}
    return out


def pooled_doc(docs):
    """A result set of one case per ident: each case pooled over `docs` (the runs of one side);
    a case some run lacks is left out."""
    by_run = [shifts.cases_by_ident(d) for d in docs]
    idents = [i for i in by_run[0] if all(i in r for r in by_run)] if by_run else []
    return {"cases": [pooled_case([r[i] for r in by_run]) for i in idents]}


def classify_runs(a_docs, s_docs, work):
    """shifts.classify over the runs of each side pooled (pooled_doc)."""
    return shifts.classify(pooled_doc(a_docs), pooled_doc(s_docs), SHIFT, work)


def shift_runs_goal(counts, label="10% shift"):
    """`counts`: one core.count() per trial over its counted 10 % cases. At least
    core.MIN_SHIFT_DIFFERENT of them DIFFERENT and slower (UNKNOWN counts against), at most
    core.MAX_SHIFT_SAME SAME, and at least MIN_COUNTED counted cases."""
    t = core.total(counts)
    n = t["cases"]
    ok = (n >= MIN_COUNTED and t["slower"] >= core.MIN_SHIFT_DIFFERENT * n - 1e-9
          and t["SAME"] <= core.MAX_SHIFT_SAME * n + 1e-9)
    return (f"{label}: {core.share(t['slower'], n)} DIFFERENT slower (goal >= "
            f"{core.MIN_SHIFT_DIFFERENT:.0%}), {core.share(t['SAME'], n)} SAME (goal <= "
            f"{core.MAX_SHIFT_SAME:.0%}), {core.share(t['UNKNOWN'], n)} UNKNOWN; {n} counted "
            f"(goal >= {MIN_COUNTED}): {core.met_text(ok)}"), ok


def run_count_table(by_r):
    """One line per run count: `by_r` {r: {"aa": [count() per trial], "shift": [count() per
    trial]}}."""
    lines = [f"{'r':>2}  {'A/A: <= 1 DIFFERENT':<19}  {'A/A SAME':<10}  {'10%: counted':>12}  "
             f"{'DIFFERENT slower':<16}  {'SAME':<10}  UNKNOWN"]
    for r in sorted(by_r):
        aa, sh = by_r[r]["aa"], core.total(by_r[r]["shift"])
        clean = sum(1 for p in aa if p["DIFFERENT"] <= core.MAX_AA_DIFFERENT)
        t, n = core.total(aa), sh["cases"]
        lines.append(f"{r:>2}  {f'{clean} of {len(aa)} trials':<19}  "
                     f"{core.share(t['SAME'], t['cases']):<10}  {n:>12}  "
                     f"{core.share(sh['slower'], n):<16}  {core.share(sh['SAME'], n):<10}  "
                     f"{core.share(sh['UNKNOWN'], n)}")
    return lines


def goals_at(by_r, max_runs=6):
    """(lines, met): both goals at every run count up to max_runs, and whether some one run count
    meets both."""
    lines, met_at = [], []
    for r in sorted(x for x in by_r if x <= max_runs):
        aa_line, aa_ok = core.aa_goal(by_r[r]["aa"], f"r={r} A/A")
        sh_line, sh_ok = shift_runs_goal(by_r[r]["shift"], f"r={r} 10% shift")
        lines += [aa_line, sh_line]
        if aa_ok and sh_ok:
            met_at.append(r)
    verdict = (f"both goals met at {', '.join(map(str, met_at))} runs a side" if met_at else
               f"no run count up to {max_runs} meets both goals")
    return lines + [verdict + f": {core.met_text(bool(met_at))}"], bool(met_at)
