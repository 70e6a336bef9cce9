"""What-if on mainline's own trace (docs/lab-validation.md#what-if): each policy's class mix
predicted from the trace mainline's kernel recorded (`wakebench replay SET --diff ... --json`)
against the class shares that policy's own kernel measured on the same cases (a gated setting's
result set, `observed.histogram`; a run that is not the trace's). By default the closed-loop mix
(`closed_mixes`: the pair where the policy's own choices led it, under the recorded load,
docs/policy-model.md#closed-loop); `--first-order` the mix over the recorded states as they were
(`mixes`). A row within LIMIT is MATCH, else MISS.

    wakebench-lab whatif MAINLINE.json POLICY=SET.json [...] [--first-order] [--wakebench W]
                         [--diff-json FILE]  (replay's JSON of MAINLINE.json, computed before)

Pure but for `main`: `predicted` reads replay's JSON, `rows` holds it against the measured shares,
`verdicts` counts the cases within LIMIT per policy against GOAL."""
import argparse
import sys

from .agreement import run_json
from .inputs import load_json
from . import LabError
from .fidelity import class_shares, tv
from .matrix_collect import observed_classes
from .registry import KERNELS as POLICIES
from .resultset import load

LIMIT = 0.15  # TV between the predicted mix and the measured shares that counts as "within"
GOAL = 0.80  # share of a policy's cases within LIMIT


def predicted(diff, key="closed_mixes"):
    """{case: {policy: class shares}} from `replay --diff ... --json`: each case's `key`
    ("closed_mixes", or "mixes": first order, where "kernel" is the recorded CPUs' own)."""
    return {c["case"]: {m["policy"]: class_shares(m["classes"]) for m in c.get(key, [])}
            for c in diff["cases"]}


def rows(pred, measured):
    """One row per (case, policy) where both a prediction and a measurement exist: `measured` is
    {policy: {case: class shares}}; a row holds both shares and their TV."""
    out = []
    for policy, cases in measured.items():
        for case, got in sorted(cases.items()):
            want = pred.get(case, {}).get(policy)
            if want and got:
                d = tv(want, got)
                out.append({"case": case, "policy": policy, "predicted": want, "measured": got,
                            "tv": d, "word": "MATCH" if d <= LIMIT else "MISS"})
    return out


def verdicts(table, limit=LIMIT, goal=GOAL):
    """{policy: {"cases", "within", "met"}}: how many of its rows lie within `limit`."""
    out = {}
    for r in table:
        v = out.setdefault(r["policy"], {"cases": 0, "within": 0})
        v["cases"] += 1
        v["within"] += r["tv"] <= limit
    for v in out.values():
        v["met"] = v["cases"] > 0 and v["within"] >= goal * v["cases"]
    return out


def share_text(s):
    return " ".join(f"{c} {100 * x:.0f}%" for c, x in sorted(s.items(), key=lambda i: -i[1]))


def render(table, verdict, limit=LIMIT, goal=GOAL):
    lines = []
    for policy, v in verdict.items():
        word = "goal met" if v["met"] else "short of the goal"
        lines.append(f"{policy}: {word}: {v['within']} of {v['cases']} cases within TV {limit:.2f}"
                     f" (goal {100 * goal:.0f}%)")
    for r in table:
        lines.append(f"  {r['word']:<5} {r['policy']:<12} {r['case']}  TV {r['tv']:.2f}")
        lines.append(f"    predicted {share_text(r['predicted'])}; measured "
                     f"{share_text(r['measured'])}")
    return "\n".join(lines)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="wakebench-lab whatif", description=__doc__.split("\n\n")[0])
    ap.add_argument("mainline", help="mainline's result set of `run --trace-decisions`")
    ap.add_argument("sets", nargs="+", metavar="POLICY=SET",
                    help="a policy and the result set its kernel (or gated setting) measured")
    ap.add_argument("--first-order", action="store_true",
                    help="the mix over the recorded states as they were, not the closed loop")
    ap.add_argument("--wakebench", default="build/wakebench")
    ap.add_argument("--diff-json", help="`wakebench replay MAINLINE.json --diff all --json`'s "
                    "output, saved before (a large trace replays for minutes)")
    args = ap.parse_args(argv)
    args.measured = {}
    for s in args.sets:
        policy, _, path = s.partition("=")
        if policy not in POLICIES or not path:
            raise LabError(f"whatif: '{s}': want POLICY=SET with POLICY one of "
                           + ", ".join(POLICIES))
        args.measured[policy] = path
    return args


def main(argv):
    args = parse_args(argv)
    want = ",".join(["mainline"] + [p for p in args.measured if p != "mainline"])
    if args.diff_json:
        diff, msg = load_json(args.diff_json), ""
    else:
        diff, msg = run_json([args.wakebench, "replay", args.mainline, "--diff", want, "--json"])
    if diff is None:
        raise LabError(f"whatif: wakebench replay {args.mainline}: {msg}")
    measured = {p: observed_classes(load(path)) for p, path in args.measured.items()}
    table = rows(predicted(diff, "mixes" if args.first_order else "closed_mixes"), measured)
    verdict = verdicts(table)
    print(render(table, verdict))
    return 0 if table else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
