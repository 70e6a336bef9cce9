"""The gated kernel: one image carrying every policy behind its sched feature
(registry FEATURES), run with zipped `--ab` specs so setting 0 has every feature off (mainline)
and setting k turns exactly the k-th on. Each setting's result set must show, in every
repetition's read-back, the intended feature state; its placements must match the per-patch
kernel's within mainline's own run-to-run TV plus FIDELITY_SLACK on every discriminating case.
Pure functions."""
import textwrap

from .registry import FEATURES

GATED = "gated"  # the kernel name in --kernels
FIDELITY_SLACK = 0.05


def settings(features=None):
    """[(policy, {feature: on?})]: setting 0 is mainline (all off), setting k the k-th policy of
    `features` (registry order) with its feature alone on."""
    features = FEATURES if features is None else features
    out = [("mainline", {f: False for f in features.values()})]
    for policy, feature in features.items():
        out.append((policy, {f: f == feature for f in features.values()}))
    return out


def cell_name(policy):
    return f"{GATED}:{policy}"


def ab_args(features=None):
    """The `wakebench run` arguments of the gated guest: one zipped --ab spec per feature."""
    rows = settings(features)
    return [a for f in rows[0][1] for a in
            ("--ab", f"feature:{f}=" + ",".join("on" if s[f] else "off" for _, s in rows))]


def read_back_problems(results, k, features=None):
    """Why the result set of setting `k` does not show its intended feature state (an empty list
    when it does): its `ab` object, and every repetition's read-back of every feature."""
    rows = settings(features)
    policy, want = rows[k]
    ab = results.ab
    if ab is None:
        return [f"setting {k} ({policy}): the result set has no `ab` object"]
    problems = []
    if ab.setting != k or ab.settings != len(rows):
        problems.append(f"setting {k} ({policy}): the set says setting {ab.setting} of "
                        f"{ab.settings}, not {k} of {len(rows)}")
    for f, on in want.items():
        if ab.values.get(f"feature:{f}") != ("on" if on else "off"):
            problems.append(f"setting {k} ({policy}): {f} is {ab.values.get(f'feature:{f}')}, "
                            f"not {'on' if on else 'off'}")
    for case in results.cases:
        if not case.ok:
            continue
        for i, rep in enumerate(case.repetitions):
            got = rep.read_back
            bad = [f for f, on in want.items()
                   if got.get(f"feature:{f}") != (f if on else f"NO_{f}")]
            if bad:
                problems.append(f"setting {k} ({policy}): {case.name} repetition {i} read "
                                "back " + ", ".join(f"{f} {got.get(f'feature:{f}')}" for f in bad))
                break
    return problems


def class_shares(counts):
    """class -> count as class -> share, classes counted 0 left out ({} when none counted)."""
    total = sum(counts.values())
    return {c: n / total for c, n in counts.items() if n} if total else {}


def tv(p, q):
    """Total variation distance between two class distributions."""
    return 0.5 * sum(abs(p.get(c, 0.0) - q.get(c, 0.0)) for c in set(p) | set(q))


def fidelity(gated, patch, mainline, aa, discriminating, slack=FIDELITY_SLACK):
    """gated:X against the per-patch kernel X on one preset: per discriminating case both ran,
    the strict TV of their observed class shares against mainline's own run-to-run TV (this run's
    `mainline` against the other run's `aa`) plus `slack`. Each argument but `discriminating`
    (case names) is case name -> class shares; `aa` None: no A/A run. Returns {"verdict",
    "cases": [...], "why"?}."""
    if aa is None:
        return {"verdict": "not tested", "why": "no A/A run (--aa)", "cases": []}
    names = [n for n in discriminating if n in gated and n in patch]
    rows = []
    for n in names:
        if n not in mainline or n not in aa:
            rows.append({"case": n, "verdict": "not tested", "why": "mainline lacks it in a run"})
            continue
        floor = tv(mainline[n], aa[n])
        d = tv(gated[n], patch[n])
        rows.append({"case": n, "tv": round(d, 3), "floor": round(floor, 3),
                     "verdict": "holds" if d <= floor + slack + 1e-9 else "FAILS"})
    judged = [r for r in rows if r["verdict"] != "not tested"]
    if not judged:
        return {"verdict": "not tested", "why": "no discriminating case ran on both kernels "
                                                "and mainline twice", "cases": rows}
    failed = any(r["verdict"] == "FAILS" for r in judged)
    return {"verdict": "FAILS" if failed else "holds", "cases": rows}


def fidelity_lines(results):
    """`results`: [(preset, policy, fidelity())] -> markdown lines of at most 100 columns, verdict
    first."""
    out = []
    for preset, policy, f in results:
        judged = [r for r in f["cases"] if "tv" in r]
        head = (f"- {f['verdict']}: {preset} / {cell_name(policy)} vs {policy}"
                + (f": {f['why']}" if "why" in f else
                   f": {sum(r['verdict'] == 'holds' for r in judged)} of {len(judged)} "
                   "discriminating cases within mainline's run-to-run TV + "
                   f"{FIDELITY_SLACK}"))
        out += textwrap.wrap(head, 100, subsequent_indent="  ", break_long_words=False)
        out += [f"  - FAILS {r['case']}: TV {r['tv']:.3f} > {r['floor']:.3f} + {FIDELITY_SLACK}"
                for r in judged if r["verdict"] == "FAILS"]
    return out
