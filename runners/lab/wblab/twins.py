"""`wakebench-lab twins MATRIX FROM TO [POLICY...]`: where each policy put the wakee on two twin
presets (the same machine, other CPU numbers: renumber.py), case by case through the renumbering,
in the model and in the guest kernel, from a matrix directory's cells (gated kernel)."""
from . import LabError, inputs, registry
from .renumber import twin_mapping


def cells(matrix, preset, policy):
    """{start pair: the case's agreement record} of one gated cell."""
    path = f"{matrix}/{preset}/gated/{policy}/agreement.json"
    doc = inputs.load_json(path, "matrix cell's agreement")
    cases = doc.get("cases") if isinstance(doc, dict) else None
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise LabError(f"{path}: not a matrix cell's agreement (no \"cases\" list of objects)")
    return {tuple(c["start"]): c for c in cases if c.get("start")}


def placement(case):
    """(the model's steady state: class and CPUs, the kernel's observed class shares)."""
    model = case["model"]
    shares = sorted(case["observed"]["classes"].items(), key=lambda kv: -kv[1])
    return (f"{'/'.join(model['classes'])} {','.join(map(str, model['cpus']))}",
            " ".join(f"{k} {100 * v:.0f}%" for k, v in shares if v >= 0.005))


def rows(matrix, src, dst, policies):
    mapping = twin_mapping(src, dst)
    out = []
    for policy in policies:
        a, b = cells(matrix, src, policy), cells(matrix, dst, policy)
        for start, case in a.items():
            twin = tuple(mapping[c] for c in start)
            if twin not in b:
                raise LabError(f"{dst} / {policy}: no case starting on {twin}")
            out.append((policy, start, twin, *placement(case), *placement(b[twin])))
    return out


def main(argv):
    ap = inputs.ArgumentParser(prog="wakebench-lab twins", description=__doc__)
    ap.add_argument("matrix", metavar="MATRIX", help="a matrix directory (its gated cells)")
    ap.add_argument("src", metavar="FROM-PRESET")
    ap.add_argument("dst", metavar="TO-PRESET", help="FROM-PRESET's twin")
    ap.add_argument("policies", metavar="POLICY", nargs="*",
                    help="the policies compared (default: every policy of the gated kernel)")
    args = ap.parse_args(argv)
    matrix, src, dst = args.matrix, args.src, args.dst
    policies = args.policies or ["mainline", *registry.FEATURES]
    table = rows(matrix, src, dst, policies)  # every cell read before a line is printed
    print(f"| policy | start ({src} / {dst}) | model | kernel | model, twin | kernel, twin |")
    print("|---|---|---|---|---|---|")
    for policy, s, t, ma, oa, mb, ob in table:
        print(f"| {policy} | {s[0]},{s[1]} / {t[0]},{t[1]} | {ma} | {oa} | {mb} | {ob} |")
    return 0
