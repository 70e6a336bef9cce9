"""How far two result sets of one setting lie apart by where the kernel put the wakee: per
kernel-placed case both ran, the total variation between their class shares over disjoint blocks
of N fresh pairs (repetitions) a side. Two guests of one kernel (or two settings of an A/A run)
give the floor under which no prediction held to one set's shares can be judged
(docs/lab-validation.md#what-if): at 10 pairs a case a pair's all-or-nothing settling makes it
sampling, not the model.

    wakebench-lab floor A.json B.json [--pairs 10,20,40] [--limit 0.15]

Pure but for `main`: `shares` pools a block's round trips by class, `blocks` pairs the two sets'
blocks case by case, `summary` counts the blocks within the limit."""
import argparse
import sys

from . import LabError
from .fidelity import class_shares, tv
from .resultset import load

LIMIT = 0.15  # the what-if's limit: within it, two sets say the same of a case


def reps_by_case(rs):
    """{case: [class -> round trips, per repetition]} of the set's ok kernel-placed cases."""
    return {c.name: [r.classes for r in c.repetitions] for c in rs.cases if c.ok and c.kernel}


def shares(block):
    """The class shares of a block of repetitions, their round trips pooled."""
    total = {}
    for r in block:
        for c, n in r.items():
            total[c] = total.get(c, 0) + n
    return class_shares(total)


def blocks(a, b, n):
    """(case, TV) for each pair of disjoint n-repetition blocks the two sets' cases both hold."""
    out = []
    for case in sorted(set(a) & set(b)):
        k = min(len(a[case]), len(b[case])) // n
        out += [(case, tv(shares(a[case][i * n:(i + 1) * n]), shares(b[case][i * n:(i + 1) * n])))
                for i in range(k)]
    return out


def summary(rows, limit=LIMIT):
    """(blocks within `limit`, blocks, the largest TV)."""
    return sum(d <= limit for _, d in rows), len(rows), max((d for _, d in rows), default=0.0)


def render(a, b, sizes, limit=LIMIT):
    lines, listed = [], []
    for n in sizes:
        rows = blocks(a, b, n)
        listed = rows if n == max(sizes) else listed  # the cases, in blocks of the largest
        within, total, worst = summary(rows, limit)
        if total:
            lines.append(f"{n} pairs a side: {within} of {total} blocks within TV {limit:.2f} "
                         f"({100 * within / total:.0f}%), the largest {worst:.2f}")
        else:
            lines.append(f"{n} pairs a side: no case holds that many in both sets")
    return "\n".join(lines + [f"  {case}  TV {d:.2f}" for case, d in listed])


def pair_sizes(text):
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected pair counts such as 10,20,40")
    return sizes


def main(argv):
    ap = argparse.ArgumentParser(prog="wakebench-lab floor", description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--pairs", type=pair_sizes, default=[10, 20, 40],
                    help="block sizes in fresh pairs a side (default 10,20,40; the cases below "
                         "in blocks of the largest)")
    ap.add_argument("--limit", type=float, default=LIMIT)
    args = ap.parse_args(argv)
    a, b = reps_by_case(load(args.a)), reps_by_case(load(args.b))
    if not set(a) & set(b):
        raise LabError(f"{args.a} and {args.b}: no kernel-placed case in both")
    print(render(a, b, args.pairs, args.limit))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
