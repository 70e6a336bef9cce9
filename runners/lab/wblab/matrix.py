"""`wakebench-lab matrix`: every preset x kernel (mainline and each patch, from build-kernel.sh)
runs the blocking mechanisms kernel-placed, each held against its own policy's model; the table
gives per cell the agreement, the observed shift against mainline's run on the same preset and the
model's predicted shift. Cells whose results.json exists are not run again (--rerun forces it);
their agreement is recomputed with the current wakebench, so a model fix re-renders the matrix
without booting anything."""
import argparse
import datetime
import json
from pathlib import Path

from . import REPO, LabError, log, write_atomic
from .agreement import agreement, mix_text, pct_text
from .cli import topology_args
from .guest import GuestPlan, run_guest
from .kernel import KERNEL_POLICIES, find_wakebench, resolve_kernel
from .registry import BLOCKING_MECHANISMS

PRESETS = ("smt2", "2llc", "smt2-2socket-numa")
# The kernel-placed cases of the blocking mechanisms (spin never blocks); a regex Google
# Benchmark's filter reads both as POSIX ERE and as ECMAScript.
RUN_FILTER = "^(" + "|".join(BLOCKING_MECHANISMS) + ")/.*kernel"
# A shift smaller than this (in class steps, see distance()) is no shift.
SHIFT_EPS = 0.1
GOAL = 0.90
# Fresh pairs per case: timing-dependent placements (a wake that finds a CPU busy for a moment) come
# per pair, so a cell's figure needs more than the lab configs' 3.
REPETITIONS = 6


def distance(classes, order):
    """Mean distance of the wakee from the waker in class steps: same-cpu 0, smt-sibling 1, ...
    in the order `wakebench topology --json` lists its classes (nearest first)."""
    rank = {c: i for i, c in enumerate(order)}
    return sum(f * rank[c] for c, f in classes.items())


def direction(x, eps=SHIFT_EPS):
    return 0 if abs(x) < eps else (1 if x > 0 else -1)


def shift_range(states, base_states, order):
    """The model's predicted shift as an interval: the patched kernel's steady states (with any
    uncertain alternatives) against mainline's, each a mix anywhere between them."""
    d = [distance(s, order) for s in states]
    b = [distance(s, order) for s in base_states]
    return min(d) - max(b), max(d) - min(b)


def direction_ok(observed, lo, hi):
    """Whether the observed shift goes a way (up, down or none) the predicted interval allows."""
    want = direction(observed)
    return (want > 0 and hi >= SHIFT_EPS) or (want < 0 and lo <= -SHIFT_EPS) or \
        (want == 0 and lo < SHIFT_EPS and hi > -SHIFT_EPS)


def shift_verdict(observed, central, lo, hi, floor=0.0):
    """The observed shift against the model's: "same" when it goes the way of the steady states'
    shift (`central`; a shift within `floor`, mainline's own run-to-run difference on that row, or
    under SHIFT_EPS counts as none), "range" when it goes another way that the model's uncertain
    range [lo, hi] allows (timing the model cannot know), "wrong" when it allows neither."""
    if direction(observed, max(SHIFT_EPS, floor)) == direction(central):
        return "same"
    return "range" if direction_ok(observed, lo, hi) else "wrong"


def trace_text(trace):
    """One line of a case's `--trace-wakeups` summary (result set `trace`): how its wakeups were
    placed, per path and class, and where its tasks migrated."""
    by = trace.get("classes_by_path") or {}
    parts = []
    for path, n in (trace.get("paths") or {}).items():
        classes = ", ".join(f"{c} {k}" for c, k in (by.get(path) or {}).items() if k)
        parts.append(f"{path} {n}" + (f" ({classes})" if classes else ""))
    mig = trace.get("migrations") or {}
    moved = ", ".join(f"{c} {k}" for c, k in (trace.get("moved_by_class") or {}).items() if k)
    foreign = trace.get("foreign") or {}
    text = (f"traced {trace.get('wakeups', 0)} wakeups by the partner: " + "; ".join(parts)
            + f"; moved off the wakee's previous CPU {trace.get('moved', 0)}"
            + (f" (to {moved})" if moved else "")
            + f"; woken by another task {foreign.get('wakeups', 0)} (moved "
            f"{foreign.get('moved', 0)}); task migrations inside a wakeup "
            f"{mig.get('at_wakeup', 0)}, outside (load balancing) {mig.get('other', 0)}")
    stacked = trace.get("stacked") or {}
    if stacked.get("wakes"):
        text += (f"; onto the waker's CPU {stacked['wakes']}, the waker then preempted by its "
                 f"wakee {stacked.get('waker_preempted', 0)}")
    since = trace.get("since_switch_out_us") or {}
    spans = [f"{k} {v['p50']:g} us ({v['p5']:g}-{v['p95']:g}, {v['n']} wakes)"
             for k, v in since.items() if v.get("n")]
    if spans:
        text += "; from the wakee's switch-out to the waking, median (5th-95th): " + ", ".join(spans)
    lost = trace.get("dropped", 0) + trace.get("unmatched", 0)
    return text + (f"; {lost} events dropped or unmatched" if lost else "")


def cell_rows(report, base, order, traces=None, floors=None):
    """One row per compared case of `report` (agreement.json of one preset x kernel): agreement,
    observed and predicted shift against `base` (mainline's report on the same preset, or None),
    judged with `floors` (case name -> mainline's own shift between two runs, see aa_floors), and
    the case's wakeup trace from `traces` (case name -> result set `trace`) when it has one."""
    base_cases = {c["name"]: c for c in (base or {}).get("cases", [])}
    rows = {}
    for c in report["cases"]:
        row = {"mechanism": c["mechanism"], "wake_flags": c["wake_flags"],
               "agreement": c["agreement"], "observed": c["observed"]["classes"],
               "model": c["model"]["classes"], "why": c.get("attribution", [])}
        if "uncertain" in c:
            row["uncertain"] = dict(c["uncertain"], strict_agreement=c["strict_agreement"])
        if c["name"] in (traces or {}):
            row["trace"] = trace_text(traces[c["name"]])
        b = base_cases.get(c["name"])
        if b is not None and report["policy"] != "mainline":
            row["observed_shift"] = round(distance(c["observed"]["classes"], order)
                                          - distance(b["observed"]["classes"], order), 3)
            lo, hi = shift_range(c["model"].get("states") or [c["model"]["classes"]],
                                 c["mainline_model"], order)
            row["model_shift"] = [round(lo, 3), round(hi, 3)]
            central = distance(c["model"]["classes"], order) - distance(
                (c["mainline_model"] or [{}])[0], order)
            row["central_shift"] = round(central, 3)
            floor = (floors or {}).get(c["name"], 0.0)
            if floors is not None:
                row["aa_floor"] = round(floor, 3)
            row["shift"] = shift_verdict(row["observed_shift"], central, lo, hi, floor)
        rows[c["name"]] = row
    return rows


def shift_text(lohi):
    lo, hi = lohi
    return f"{lo:+.2f}" if abs(hi - lo) < 0.005 else f"[{lo:+.2f},{hi:+.2f}]"


SHIFT_FLAG = {"same": "", "range": " (in range)", "wrong": " (wrong way)"}


def cell_text(r):
    """One table cell: agreement (~ uncertain, with its strict figure), then for a patched kernel
    the observed / predicted shift and how it went."""
    t = f"{r['agreement'] * 100:.0f}%"
    if "uncertain" in r:
        t += "~"
        strict = r["uncertain"]["strict_agreement"]
        if f"{strict * 100:.0f}" != f"{r['agreement'] * 100:.0f}":
            t += f" s{strict * 100:.0f}%"
    if r["agreement"] < GOAL:
        t = f"**{t}**"
    if "observed_shift" in r:
        t += f" {r['observed_shift']:+.2f}/{r['central_shift']:+.2f}" + SHIFT_FLAG[r["shift"]]
    return t


def totals(rows):
    """The matrix in a few counts: rows, agreement at the goal with the model's range and with
    its steady state alone, and how the patched kernels' shifts went."""
    n = len(rows)
    ranged = sum(r["agreement"] >= GOAL for r in rows)
    strict = sum((r["uncertain"]["strict_agreement"] if "uncertain" in r else r["agreement"])
                 >= GOAL for r in rows)
    shifts = [r["shift"] for r in rows if "shift" in r]
    return (f"{n} case rows: agreement at {GOAL * 100:.0f}% or more in {ranged} with the model's "
            f"range, in {strict} with its steady state alone. Shifts of the patched kernels "
            f"against mainline ({len(shifts)} rows): {shifts.count('same')} the way the steady "
            f"states predict, {shifts.count('range')} another way the uncertain range allows, "
            f"{shifts.count('wrong')} the wrong way.")


def render(matrix):
    """The totals, the markdown table (one per preset: rows are cases, columns kernels), then the
    rows that needed the model's uncertain range (strict agreement under the goal, or a shift the
    steady states do not predict) and the rows under the goal or shifted the wrong way, each with
    the model's reasons and the wakeup trace."""
    kernels = matrix["kernels"]
    every = [(p, k, n, r) for p, pk in matrix["cells"].items() for k, cell in pk.items()
             for n, r in (cell or {}).get("rows", {}).items()]
    lines = [totals([r for _, _, _, r in every]), ""]
    for preset, per_kernel in matrix["cells"].items():
        names = []
        for k in kernels:
            for n in (per_kernel.get(k) or {}).get("rows", {}):
                if n not in names:
                    names.append(n)
        lines += [f"#### {preset}", "",
                  "| case | flags | " + " | ".join(kernels) + " |",
                  "|---|---|" + "---|" * len(kernels)]
        for n in names:
            flags = next(per_kernel[k]["rows"][n]["wake_flags"] for k in kernels
                         if n in (per_kernel.get(k) or {}).get("rows", {}))
            cells = []
            for k in kernels:
                cell = per_kernel.get(k)
                r = (cell or {}).get("rows", {}).get(n)
                cells.append(cell_text(r) if r is not None else
                             "-" if cell and "rows" in cell else "not run")
            lines.append(f"| {n} | {flags} | " + " | ".join(cells) + " |")
        lines.append("")
    needed = [(p, k, n, r) for p, k, n, r in every if "uncertain" in r and r["agreement"] >= GOAL
              and (r["uncertain"]["strict_agreement"] < GOAL or r.get("shift") == "range")]
    if needed:
        lines += ["#### Rows that needed the model's uncertain range", "",
                  "Strict agreement (the steady state alone) under the goal, or a shift another "
                  "way than the steady states predict: the closest mix of the steady state and "
                  "its alternatives (each fresh pair may settle in any of them), and the traced "
                  "wakeups.", ""]
    for p, k, n, r in needed:
        u = r["uncertain"]
        lines.append(f"- {p} / {k} / {n}: observed {pct_text(r['observed'])}; model "
                     f"{pct_text(r['model'])}; best mix {mix_text(u)}, agreement "
                     f"{r['agreement'] * 100:.0f}%, strict {u['strict_agreement'] * 100:.0f}%"
                     + (f"; shift {r['observed_shift']:+.2f}, steady states "
                        f"{r['central_shift']:+.2f}, range {shift_text(r['model_shift'])}"
                        + (f", mainline's own run-to-run {r['aa_floor']:.2f}"
                           if "aa_floor" in r else "") if "observed_shift" in r else ""))
        for a in u["alternatives"]:
            lines.append(f"  - or {pct_text(a['classes'])} on CPUs {a.get('cpus')} once "
                         f"{a.get('cause')}")
        if "trace" in r:
            lines.append(f"  - {r['trace']}")
    if needed:
        lines.append("")
    missing = sorted({(k, cell["missing"]) for pk in matrix["cells"].values()
                      for k, cell in pk.items() if cell and cell.get("missing")})
    if missing:
        lines += ["#### Not run", ""] + [f"- {k}: {why}" for k, why in missing] + [""]
    short = [(p, k, n, r) for p, k, n, r in every
             if r["agreement"] < GOAL or r.get("shift") == "wrong"]
    if short:
        lines += ["#### Cells under 90% or shifted the wrong way", ""]
    for p, k, n, r in short:
        lines.append(f"- {p} / {k} / {n}: agreement {r['agreement'] * 100:.0f}%, model "
                     f"{pct_text(r['model'])}, observed {pct_text(r['observed'])}"
                     + (f", shift observed {r['observed_shift']:+.2f} vs predicted "
                        f"{r['central_shift']:+.2f} (range {shift_text(r['model_shift'])})"
                        if "observed_shift" in r else ""))
        for why in r["why"] + ([r["trace"]] if "trace" in r else []):
            lines.append(f"  - {why}")
    return "\n".join(lines) + "\n"


def observed_classes(results_path):
    """Per case name of a result set: the share of round trips in each placement class."""
    out = {}
    for c in json.loads(Path(results_path).read_text()).get("cases", []):
        hist = (c.get("observed") or {}).get("histogram") or {}
        n = sum(hist.values())
        if n:
            out[c["name"]] = {k: v / n for k, v in hist.items() if v}
    return out


def aa_floors(order, base, other):
    """Per case name: how far mainline's observed placements moved between two runs of the matrix
    (`base`: mainline's agreement report on one preset; `other`: observed_classes() of mainline's
    result set on that preset in the other run), in class steps. A patched kernel's shift within
    that is no shift."""
    return {c["name"]: abs(distance(c["observed"]["classes"], order)
                           - distance(other[c["name"]], order))
            for c in (base or {}).get("cases", []) if c["name"] in other}


def kernel_line(policy, info):
    keys = ("source_version", "source_package", "patch_sha256", "config_sha256", "lockdep",
            "build_seconds")
    return f"- {policy}: " + ", ".join(
        f"{k} {str(info[k])[:16] if k.endswith('sha256') else info[k]}" for k in keys if k in info)


def update_doc(doc, table):
    """Replaces the text between the matrix markers of `doc` with `table`."""
    begin, end = "<!-- matrix:begin -->", "<!-- matrix:end -->"
    text = Path(doc).read_text()
    if begin not in text or end not in text:
        raise LabError(f"{doc}: no '{begin}' ... '{end}' markers to put the matrix between")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    write_atomic(Path(doc), head + begin + "\n" + table + end + tail)


def main(argv):
    ap = argparse.ArgumentParser(prog="wakebench-lab matrix", description=__doc__)
    ap.add_argument("--presets", default=",".join(PRESETS),
                    help=f"comma-separated presets (default {','.join(PRESETS)})")
    ap.add_argument("--kernels", default=",".join(KERNEL_POLICIES),
                    help=f"comma-separated policies (default {','.join(KERNEL_POLICIES)}); each "
                         "kernel comes from build-kernel.sh (built unless cached)")
    ap.add_argument("--image", action="append", default=[], metavar="POLICY=IMAGE",
                    help="boot IMAGE for POLICY instead of asking build-kernel.sh (repeatable)")
    ap.add_argument("--out", help="matrix directory (default results/lab/matrix-<time>); one "
                                  "<preset>/<policy>/ per cell")
    ap.add_argument("--rerun", action="store_true", help="run cells whose results exist again")
    ap.add_argument("--no-run", action="store_true",
                    help="only re-render from the cells that exist (no guest is booted)")
    ap.add_argument("--aa", metavar="DIR",
                    help="another run of the matrix (its --out): mainline's own shift between the "
                         "two runs, per row, is the floor under which a patched kernel's shift "
                         "counts as none")
    ap.add_argument("--doc", help="also put the table between the matrix markers of this file "
                                  "(docs/lab-validation.md)")
    ap.add_argument("--wakebench", help="wakebench binary (as for one guest)")
    ap.add_argument("--timeout", type=int, default=1800, help="per guest, s (default 1800)")
    ap.add_argument("--repetitions", type=int, default=REPETITIONS,
                    help="fresh pairs per kernel-placed case (default %(default)s; the lab "
                         "configs' own count is 3)")
    ap.add_argument("--no-trace", action="store_true",
                    help="do not record the wakeups (by default every guest runs `wakebench run "
                         "--trace-wakeups`, so a cell that falls short carries its wakeup paths "
                         "and its migrations inside and outside wakeups)")
    args = ap.parse_args(argv)

    presets = [p for p in args.presets.split(",") if p]
    kernels = [k for k in args.kernels.split(",") if k]
    for k in kernels:
        if k not in KERNEL_POLICIES:
            raise LabError(f"--kernels: unknown policy {k} (one of {', '.join(KERNEL_POLICIES)})")
    images = dict(kv.split("=", 1) for kv in args.image)
    if args.aa:  # checked before any guest runs, not after them
        for preset in presets:
            if not (Path(args.aa) / preset / "mainline" / "results.json").is_file():
                raise LabError(f"--aa {args.aa}: no {preset}/mainline/results.json (another run "
                               "of the matrix over the same presets)")
    if args.repetitions < 1:
        raise LabError(f"--repetitions: {args.repetitions} is not a positive count")
    run_args = [f"--benchmark_filter={RUN_FILTER}", f"--benchmark_repetitions={args.repetitions}"]
    if not args.no_trace:
        run_args.append("--trace-wakeups")
    wakebench = find_wakebench(args.wakebench)
    out = Path(args.out) if args.out else (
        REPO / "results/lab" / f"matrix-{datetime.datetime.now():%Y%m%d-%H%M%S}")
    matrix = {"kernels": kernels, "cells": {p: {} for p in presets}, "kernel_meta": {}}
    # Kernel by kernel (each image is built or found once), every preset on each.
    for policy in kernels:
        for preset in presets:
            cell = out / preset / policy
            why = None
            if not args.no_run and (args.rerun or not (cell / "results.json").is_file()):
                try:  # a kernel that cannot be had leaves its cells out, the others run
                    kernel, pol, info = resolve_kernel(images.get(policy), policy)
                except LabError as e:
                    why = f"no kernel: {e}"
                    log(f"{preset} x {policy}: {why}")
                else:
                    name, smp, numa, cpu = topology_args(preset)
                    plan = GuestPlan(name, smp, numa, cpu, kernel, pol, info, wakebench,
                                     REPO / f"configs/lab/{preset}.json", cell,
                                     timeout=args.timeout,
                                     run_args=run_args)
                    run_guest(plan)
            matrix["cells"][preset][policy] = (
                {"missing": why} if why else collect(wakebench, cell, policy, matrix))
    order = topology_order(out)
    for preset, per_kernel in matrix["cells"].items():
        base = (per_kernel.get("mainline") or {}).get("report")
        floors = None
        if args.aa:
            floors = aa_floors(order, base, observed_classes(
                Path(args.aa) / preset / "mainline" / "results.json"))
            matrix["aa"] = str(args.aa)
        for policy, cell in per_kernel.items():
            if cell.get("report"):
                cell["rows"] = cell_rows(cell["report"], base, order, cell.pop("traces", None),
                                         floors)
    table = render_document(matrix)
    out.mkdir(parents=True, exist_ok=True)
    for cells in matrix["cells"].values():
        for cell in cells.values():
            cell.pop("report", None)
    write_atomic(out / "matrix.json", json.dumps(matrix, indent=1) + "\n")
    write_atomic(out / "matrix.md", table)
    if args.doc:
        update_doc(args.doc, table)
    print(table, end="")
    log(f"matrix in {out}/matrix.md")
    return 0


def collect(wakebench, cell, policy, matrix):
    """The agreement of one cell from its results.json, recomputed with the current model."""
    results = cell / "results.json"
    if not results.is_file():
        return {"missing": "not run" if not cell.exists() else "no results (see lab-summary.json)"}
    data = json.loads(results.read_text())
    env = data.get("environment", {})
    info = env.get("lab_kernel") or {}
    if info.get("policy", policy) != policy:
        raise LabError(f"{results}: ran policy {info.get('policy')}, not {policy}")
    matrix["kernel_meta"].setdefault(policy, info)
    rep = agreement(wakebench, results, cell, policy)
    if "unavailable" in rep:
        return {"missing": rep["unavailable"]}
    pairs = sorted({len(c.get("repetitions") or []) for c in data.get("cases", [])
                    if str(c.get("placement", "")).startswith("kernel")})
    traces = {c["name"]: c["trace"] for c in data.get("cases", [])
              if isinstance(c.get("trace"), dict) and "paths" in c["trace"]}
    return {"report": json.loads((cell / "agreement.json").read_text()), "pairs": pairs,
            "traces": traces}


def topology_order(out):
    """The class order (nearest first) from any cell's `wakebench topology --json` output."""
    for t in sorted(Path(out).glob("*/*/topology.json")):
        classes = json.loads(t.read_text()).get("classes", [])
        if classes:
            return [c["class"] for c in classes]
    raise LabError(f"{out}: no cell has a topology.json (no guest came back)")


def pairs_text(matrix):
    """How many fresh pairs the cells' kernel-placed cases ran, e.g. "6" or "3-6"."""
    n = sorted({k for pk in matrix["cells"].values() for cell in pk.values()
                for k in (cell or {}).get("pairs", [])})
    return "?" if not n else str(n[0]) if n[0] == n[-1] else f"{n[0]}-{n[-1]}"


def render_document(matrix):
    floor = (f"or within mainline's own shift on that row between this run and another run of "
             f"the matrix ({matrix['aa']}), " if matrix.get("aa") else "")
    head = [f"Rendered {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC from "
            "each cell's results.json (the guests' own run times are in their lab-summary.json). "
            "Per cell: the agreement of the kernel's placements with its own policy's model (1 - "
            "total variation distance, round trips of " + pairs_text(matrix) + " fresh pairs x "
            "2000); ~ marks a case the model calls uncertain, held to its range (the closest mix "
            "of its steady state and alternatives), with sNN% the strict agreement (the steady "
            "state alone) where lower; **bold** is under 90%. Then for a patched kernel the "
            "observed / predicted shift against mainline's run on the same preset: the mean "
            "distance of the wakee from the waker in class steps (same-cpu 0, smt-sibling 1, "
            "...; negative = closer to the waker), predicted from the two steady states; "
            "(in range) an observed shift another way, which the uncertain ranges allow, (wrong "
            "way) one they do not; a shift under 0.1 " + floor + "counts as none.", "",
            "Kernels:"]
    head += [kernel_line(p, matrix["kernel_meta"].get(p, {})) for p in matrix["kernels"]]
    return "\n".join(head) + "\n\n" + render(matrix)
