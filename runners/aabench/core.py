"""Pure functions of the A/A benchmark: scaling a result set, counting compare's stars, the summary.

Nothing here runs wakebench; aabench/__main__.py does, and tests/aa/test_aabench.py tests these.
"""

import copy
import statistics

# The RTT statistics of a case (rtt_ns) and of each repetition that compare can test.
RTT_STATS = ("min", "mean", "median", "p90", "p99", "p999", "max")

# The goals (README.md#aa-benchmark-of-compare): at most MAX_AA_STARS starred cases in at least
# MIN_CLEAN_SHARE of the A/A pairs; at least MIN_POWER of the cases starred under a 10 % synthetic
# regression.
MAX_AA_STARS = 1
MIN_CLEAN_SHARE = 4 / 5
MIN_POWER = 0.90


def scale_rtt(doc, factor):
    """A copy of result set `doc` whose round-trip times are all `factor` times longer: a synthetic
    regression with the run's real noise. Every RTT statistic of every ok case and of each of its
    repetitions is scaled; wakeups, tps and counters are left alone."""
    out = copy.deepcopy(doc)
    for case in out.get("cases", []):
        if case.get("status") != "ok":
            continue
        rtt = case.get("rtt_ns")
        if isinstance(rtt, dict):
            for k in RTT_STATS + ("stddev",):
                if isinstance(rtt.get(k), (int, float)):
                    rtt[k] = rtt[k] * factor
        for rep in case.get("repetitions") or []:
            for k in RTT_STATS:
                if isinstance(rep.get(k), (int, float)):
                    rep[k] = rep[k] * factor
    return out


def count_stars(compare_doc, want_sign=0):
    """(starred, compared) over the rows of `wakebench compare --format json` with two sets:
    compared = rows where both cells are ok and have a ratio; starred = those marked significant
    (and, with want_sign = -1 or +1, whose change has that sign: + = better)."""
    starred = compared = 0
    for row in compare_doc["rows"]:
        base, other = row["cells"][0], row["cells"][1]
        if base.get("status") != "ok" or other.get("status") != "ok" or other.get("ratio") is None:
            continue
        compared += 1
        if not other.get("significant"):
            continue
        change = other.get("change_pct") or 0.0
        if want_sign == 0 or (change > 0) == (want_sign > 0):
            starred += 1
    return starred, compared


def verdict(pairs):
    """The summary of the pairs' figures. `pairs` is a list of dicts with keys "aa" and
    "aa_floor" ((starred, compared) without and with the noise floor) and "power" (factor ->
    (starred, compared), with the floor). Returns (lines, goals_met)."""
    lines = []
    factors = sorted({f for p in pairs for f in p["power"]})
    head = "pair  cases  A/A starred  A/A starred (floor)" + "".join(
        f"  power x{f:.2f}" for f in factors)
    lines.append(head)
    for i, p in enumerate(pairs, 1):
        row = f"{i:>4}  {p['aa'][1]:>5}  {p['aa'][0]:>11}  {p['aa_floor'][0]:>19}"
        for f in factors:
            s, n = p["power"][f]
            row += f"  {share(s, n):>11}"
        lines.append(row)
    n = len(pairs)
    clean = sum(1 for p in pairs if p["aa_floor"][0] <= MAX_AA_STARS)
    clean_raw = sum(1 for p in pairs if p["aa"][0] <= MAX_AA_STARS)
    met_aa = n > 0 and clean >= MIN_CLEAN_SHARE * n
    lines.append("")
    lines.append(f"A/A: {clean} of {n} pairs star <= {MAX_AA_STARS} case with the noise floor "
                 f"({clean_raw} of {n} without it); goal: >= {MIN_CLEAN_SHARE:.0%} of the pairs: "
                 + ("met" if met_aa else "NOT met"))
    met_power = True
    for f in factors:
        s = sum(p["power"][f][0] for p in pairs)
        c = sum(p["power"][f][1] for p in pairs)
        per_pair = statistics.median([ratio(*p["power"][f]) for p in pairs]) if pairs else 0.0
        line = (f"power x{f:.2f}: {share(s, c)} of the compared cases starred as slower over all "
                f"pairs (median pair {per_pair:.0%})")
        if abs(f - 1.10) < 1e-9:
            ok = c > 0 and s / c >= MIN_POWER
            met_power = ok
            line += f"; goal: >= {MIN_POWER:.0%}: " + ("met" if ok else "NOT met")
        lines.append(line)
    return lines, met_aa and met_power


def ratio(s, n):
    return s / n if n else 0.0


def share(s, n):
    return f"{s}/{n} {ratio(s, n):.0%}" if n else "-"
