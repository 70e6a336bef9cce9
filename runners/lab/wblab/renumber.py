"""A run config's CPU ids carried from one preset to its renumbered twin (the same machine, other
CPU numbers: arm64-smt2-cls and arm64-smt2-cls-strided): the same relations between CPUs, not the
same ids. `wakebench-lab renumber FROM TO IN OUT` writes the mapped config."""
import json
import re
from pathlib import Path

from . import LabError, inputs, write_atomic
from .cpulist import format_cpu_list, parse_cpu_list
from .qemu import PRESETS, expected_topology

# Params whose values are CPU ids: a kernel case's start CPUs ("a,b") and a background that
# names CPUs (a knob word such as "none" or "other-llc" names none).
CPU_PARAMS = ("start", "background")


def preset_topology(name):
    p = PRESETS.get(name)
    if p is None:
        raise LabError(f"no preset {name!r}")
    return expected_topology(p["smp"], p["numa"], p.get("arch", "x86_64"), p.get("caches"),
                             p.get("numbering", "contiguous"))


def twin_mapping(src, dst):
    """{cpu of preset `src`: the cpu of preset `dst` on the same qemu CPU}; LabError unless the
    two are one machine (the same -smp, -numa and caches)."""
    a, b = PRESETS.get(src, {}), PRESETS.get(dst, {})
    if any(a.get(k) != b.get(k) for k in ("smp", "numa", "caches", "arch")):
        raise LabError(f"{src} and {dst} are not one machine renumbered (their -smp, -numa, "
                       "caches or arch differ)")
    by_index = {info["index"]: n for n, info in preset_topology(dst)["cpus"].items()}
    return {n: by_index[info["index"]] for n, info in preset_topology(src)["cpus"].items()}


def map_value(value, mapping, where):
    if not re.fullmatch(r"[0-9,\-]+", value):
        return value  # a knob word
    try:
        cpus = parse_cpu_list(value)
    except ValueError:
        raise LabError(f"{where}: {value!r} is not a CPU list") from None
    if value.count(",") == 1 and "-" not in value:  # an ordered pair: waker, wakee
        return ",".join(str(mapping[int(c)]) for c in value.split(","))
    return format_cpu_list({mapping[c] for c in cpus})


def renumber_config(doc, mapping, note):
    """`doc` (a run config) with every CPU id of CPU_PARAMS mapped; the search record, which
    speaks of the source's CPU ids, is left out; `note` joins the description."""
    out = {k: v for k, v in doc.items() if k != "search"}
    out["description"] = f"{doc.get('description', '')} {note}".strip()
    cases = []
    for k, case in enumerate(doc.get("cases", [])):
        case = dict(case)
        params = dict(case.get("params", {}))
        for name in CPU_PARAMS:
            if name in params:
                params[name] = [map_value(str(v), mapping, f"cases[{k}].params.{name}")
                                for v in params[name]]
        case["params"] = params
        cases.append(case)
    out["cases"] = cases
    return out


def main(argv):
    ap = inputs.ArgumentParser(prog="wakebench-lab renumber", description=__doc__)
    for dest, metavar in (("src", "FROM-PRESET"), ("dst", "TO-PRESET"), ("inp", "IN.json"),
                          ("outp", "OUT.json")):
        ap.add_argument(dest, metavar=metavar)
    args = ap.parse_args(argv)
    src, dst, inp, outp = args.src, args.dst, args.inp, args.outp
    mapping = twin_mapping(src, dst)
    doc = inputs.load_json(inp, "config")
    note = (f"Mapped from {src}'s CPU ids to {dst}'s by `wakebench-lab renumber` "
            f"({', '.join(f'{a}->{b}' for a, b in sorted(mapping.items()))}).")
    write_atomic(Path(outp), json.dumps(renumber_config(doc, mapping, note), indent=2) + "\n")
    return 0
