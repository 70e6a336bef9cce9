"""`wakebench-lab twins MATRIX FROM TO [POLICY...]`: where each policy put the wakee on two twin
presets (the same machine, other CPU numbers: renumber.py), case by case through the renumbering,
in the model and in the guest kernel, from a matrix directory's cells (gated kernel)."""
import json

from . import LabError
from .renumber import twin_mapping


def cells(matrix, preset, policy):
    """{start pair: the case's agreement record} of one gated cell."""
    path = f"{matrix}/{preset}/gated/{policy}/agreement.json"
    try:
        with open(path) as f:
            return {tuple(c["start"]): c for c in json.load(f)["cases"] if c.get("start")}
    except (OSError, ValueError, KeyError) as e:
        raise LabError(f"{path}: not a matrix cell's agreement ({e})") from None


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
    if len(argv) < 3:
        raise LabError("usage: wakebench-lab twins MATRIX FROM-PRESET TO-PRESET [POLICY...]")
    matrix, src, dst = argv[:3]
    policies = argv[3:] or ["mainline", "sync-core"]
    print(f"| policy | start ({src} / {dst}) | model | kernel | model, twin | kernel, twin |")
    print("|---|---|---|---|---|---|")
    for policy, s, t, ma, oa, mb, ob in rows(matrix, src, dst, policies):
        print(f"| {policy} | {s[0]},{s[1]} / {t[0]},{t[1]} | {ma} | {oa} | {mb} | {ob} |")
    return 0
