"""`wakebench-lab matrix`: every preset x kernel (mainline and each patch, from build-kernel.sh)
runs the blocking mechanisms kernel-placed, each held against its own policy's model; the table
gives per cell the agreement, the observed shift against mainline's run on the same preset and the
model's predicted shift. Cells whose results.json exists are not run again (--rerun forces it);
their agreement is recomputed with the current wakebench, so a model fix re-renders the matrix
without booting anything."""
import argparse
import datetime
import hashlib
import json
import types
from pathlib import Path

from . import REPO, RESULTS, LabError, log, write_atomic
from . import confusion, replay, resultset
from .agreement import agreement, mix_text, pct_text
from .cases import parse_cases, provenance, provenance_lines
from .topology import topology_args
from .fidelity import GATED, ab_args, cell_name, fidelity, fidelity_lines, read_back_problems, \
    settings
from .guest import GuestPlan, label_results, run_guest
from . import qemu
from .kernel import KERNEL_POLICIES, find_guest_wakebench, find_wakebench, resolve_kernel
from .registry import BLOCKING_MECHANISMS

PRESETS = tuple(qemu.PRESETS)  # every preset the lab has
# The kernel-placed cases of the blocking mechanisms (spin never blocks); a regex Google
# Benchmark's filter reads both as POSIX ERE and as ECMAScript.
RUN_FILTER = "^(" + "|".join(BLOCKING_MECHANISMS) + ")/.*kernel"
# A shift smaller than this (in class steps, see distance()) is no shift.
SHIFT_EPS = 0.1
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


# How a patched kernel's observed shift against mainline went, by what the two steady states
# predict: where they differ, "as predicted" (the same way), "not seen" (no shift) or "wrong way";
# where they are equal, "none" or "unpredicted" (a shift beyond mainline's own run-to-run shift on
# that row). The uncertain ranges play no part: they allow almost any shift.
SHIFTS = ("as predicted", "not seen", "wrong way", "none", "unpredicted")


def shift_verdict(observed, central, floor=0.0):
    """`observed` against the steady states' shift `central`; a shift within `floor` (mainline's
    own run-to-run difference on that row) or under SHIFT_EPS counts as none."""
    seen, want = direction(observed, max(SHIFT_EPS, floor)), direction(central)
    if want == 0:
        return "none" if seen == 0 else "unpredicted"
    return "as predicted" if seen == want else "not seen" if seen == 0 else "wrong way"


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
    """One row per compared case of `report` (agreement.json of one preset x kernel): verdict,
    agreements and coverage, the observed and predicted shift against `base` (mainline's report on
    the same preset, or None), judged with `floors` (case name -> mainline's own shift between two
    runs, see aa_floors), and the case's wakeup trace from `traces` (case name -> result set
    `trace`) when it has one."""
    base_cases = {c["name"]: c for c in (base or {}).get("cases", [])}
    rows = {}
    for c in report["cases"]:
        row = {"mechanism": c["mechanism"], "wake_flags": c["wake_flags"],
               "verdict": c["verdict"], "agreement": c["strict_agreement"],
               "range_agreement": c["range_agreement"], "coverage": c["coverage"],
               "observed": c["observed"]["classes"], "model": c["model"]["classes"],
               "why": c.get("attribution", [])}
        if "uncertain" in c:
            row["uncertain"] = c["uncertain"]
        if c["name"] in (traces or {}):
            row["trace"] = trace_text(traces[c["name"]])
        b = base_cases.get(c["name"])
        if b is not None and report["policy"] != "mainline":
            row["observed_shift"] = round(distance(c["observed"]["classes"], order)
                                          - distance(b["observed"]["classes"], order), 3)
            central = distance(c["model"]["classes"], order) - distance(
                (c["mainline_model"] or [{}])[0], order)
            row["central_shift"] = round(central, 3)
            floor = (floors or {}).get(c["name"], 0.0)
            if floors is not None:
                row["aa_floor"] = round(floor, 3)
            row["shift"] = shift_verdict(row["observed_shift"], central, floor)
        rows[c["name"]] = row
    return rows


def cell_text(r):
    """One table cell: the verdict word and the strict agreement (**bold** unless MATCH), the
    range's agreement after an EXPLAINED; then for a patched kernel the observed / predicted shift
    and how it went."""
    t = f"{r['verdict']} {r['agreement'] * 100:.0f}%"
    if r["verdict"] == "EXPLAINED":
        t += f" r{r['range_agreement'] * 100:.0f}%"
    if r["verdict"] != "MATCH":
        t = f"**{t}**"
    if "observed_shift" in r:
        t += f" {r['observed_shift']:+.2f}/{r['central_shift']:+.2f} {r['shift']}"
    return t


def totals(rows):
    """The matrix in a few counts: rows per verdict word (only MATCH is agreement), and how the
    patched kernels' shifts went."""
    words = [r["verdict"] for r in rows]
    shifts = [r["shift"] for r in rows if "shift" in r]
    predicted = [s for s in shifts if s in SHIFTS[:3]]
    return (f"{len(rows)} case rows: {words.count('MATCH')} MATCH (the steady state within TV "
            f"0.25), {words.count('EXPLAINED')} EXPLAINED (a mix with named alternatives), "
            f"{words.count('MISS')} MISS; {words.count('NO-PREDICTION')} NO-PREDICTION (the "
            "model's range admits 90% or more of what the cpuset allows: counted apart, never as "
            f"agreement). {sum((r['coverage'] or 0) >= 0.9 for r in rows)} rows have a range "
            "that admits 90% or more (there only the steady state could fail). Shifts of the "
            f"patched kernels against mainline ({len(shifts)} rows): "
            f"where the steady states predict one ({len(predicted)} rows), "
            f"{shifts.count('as predicted')} as predicted, {shifts.count('not seen')} not seen, "
            f"{shifts.count('wrong way')} the wrong way; where they predict none "
            f"({len(shifts) - len(predicted)} rows), {shifts.count('none')} none, "
            f"{shifts.count('unpredicted')} unpredicted.")


def row_line(p, k, n, r):
    """A row of the lists below the tables: where, what the model and the guest said."""
    return (f"- {p} / {k} / {n}: {r['verdict']}, strict {r['agreement'] * 100:.0f}%, range "
            f"{r['range_agreement'] * 100:.0f}% (admits {(r['coverage'] or 0) * 100:.0f}%); "
            f"observed {pct_text(r['observed'])}; model {pct_text(r['model'])}"
            + (f"; shift {r['observed_shift']:+.2f}, steady states {r['central_shift']:+.2f} "
               f"({r['shift']})" + (f", mainline's own run-to-run {r['aa_floor']:.2f}"
                                    if "aa_floor" in r else "")
               if "observed_shift" in r else ""))


def listed(title, intro, rows, details):
    """A titled list of rows, each followed by its `details(row)` lines."""
    if not rows:
        return []
    lines = [f"#### {title}", "", intro, ""]
    for p, k, n, r in rows:
        lines.append(row_line(p, k, n, r))
        lines += [f"  - {d}" for d in details(r)]
    return lines + [""]


def alternatives_lines(r):
    u = r.get("uncertain") or {}
    out = [f"best mix {mix_text(u)}"] if u else []
    out += [f"or {pct_text(a['classes'])} on CPUs {a.get('cpus')} once {a.get('cause')}"
            for a in u.get("alternatives", [])]
    return out + ([r["trace"]] if "trace" in r else [])


def render(matrix):
    """The totals, the markdown table (one per preset: rows are cases, columns kernels), then the
    rows by word: EXPLAINED (with the alternatives), NO-PREDICTION (apart), MISS and every
    shift the wrong way or unpredicted (with the model's reasons and the wakeup trace)."""
    kernels = matrix.get("columns") or matrix["kernels"]
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
            mark = " (e)" if n in emulated(per_kernel) else ""
            lines.append(f"| {n}{mark} | {flags} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += listed("EXPLAINED rows", "A strict miss that a mix of the steady state and the "
                    "named alternatives brings within 0.25 (each fresh pair may settle in any of "
                    "them), with the traced wakeups.",
                    [x for x in every if x[3]["verdict"] == "EXPLAINED"], alternatives_lines)
    lines += listed("NO-PREDICTION rows", "The model's range admits 90% or more of what the "
                    "cpuset allows: whatever the kernel did, the range held it. Not agreement.",
                    [x for x in every if x[3]["verdict"] == "NO-PREDICTION"],
                    lambda r: [r["trace"]] if "trace" in r else [])
    missing = sorted({(k, cell["missing"]) for pk in matrix["cells"].values()
                      for k, cell in pk.items() if cell and cell.get("missing")})
    if missing:
        lines += ["#### Cells not run or failed", ""] + [f"- {k}: {why}" for k, why in missing] \
            + [""]
    lines += listed("MISS rows and shifts the wrong way or unpredicted", "With the model's "
                    "reasons and the traced wakeups.",
                    [x for x in every if x[3]["verdict"] == "MISS"
                     or x[3].get("shift") in ("wrong way", "unpredicted")],
                    lambda r: r["why"] + ([r["trace"]] if "trace" in r else []))
    return "\n".join(lines) + "\n"


def emulated(per_kernel):
    """The case names whose discriminating pairs differ without the emulation-only alternatives
    (the confusion rows of any cell of the preset)."""
    return {r["case"] for cell in per_kernel.values()
            for r in ((cell or {}).get("confusion") or {}).get("rows", []) if r.get("emulation")}


def observed_classes(results):
    """Per case name of a result set (resultset.ResultSet): the share of round trips in each
    placement class. LabError in one line for a negative count."""
    out = {}
    for i, c in enumerate(results.cases):
        if any(v < 0 for v in c.histogram.values()):
            raise LabError(f"{results.where}: cases[{i}] has a negative count in "
                           "observed.histogram")
        n = sum(c.histogram.values())
        if n:
            out[c.name] = {k: v / n for k, v in c.histogram.items() if v}
    return out


def parse_images(pairs):
    """--image POLICY=IMAGE, each a known policy and an existing file, or LabError."""
    images = {}
    for kv in pairs:
        policy, sep, path = kv.partition("=")
        if not sep or policy not in KERNEL_POLICIES + (GATED,):
            raise LabError(f"--image {kv}: expected POLICY=IMAGE with POLICY one of "
                           f"{', '.join(KERNEL_POLICIES + (GATED,))}")
        if not Path(path).is_file():
            raise LabError(f"--image {kv}: {path} is not a file")
        images[policy] = path
    return images


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


def update_doc(doc, table, arch="x86_64"):
    """Replaces the text between the matrix markers of `doc` with `table`: each architecture has
    its own block (matrix:begin / matrix:end for x86_64, matrix-<arch>:begin / ...:end)."""
    tag = "matrix" if arch == "x86_64" else f"matrix-{arch}"
    begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    text = Path(doc).read_text()
    if begin not in text or end not in text:
        raise LabError(f"{doc}: no '{begin}' ... '{end}' markers to put the matrix between")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    write_atomic(Path(doc), head + begin + "\n" + table + end + tail)


def parser():
    ap = argparse.ArgumentParser(prog="wakebench-lab matrix", description=__doc__)
    ap.add_argument("--arch", choices=list(qemu.ARCHES), default="x86_64",
                    help="the guests' architecture: the default presets are its own (default "
                         "x86_64)")
    ap.add_argument("--presets",
                    help="comma-separated presets (default: every preset of --arch; "
                         f"{', '.join(PRESETS)})")
    ap.add_argument("--kernels", default=",".join(KERNEL_POLICIES),
                    help=f"comma-separated policies (default {','.join(KERNEL_POLICIES)}); each "
                         "kernel comes from build-kernel.sh (built unless cached); "
                         f"'{GATED}': the one kernel with every policy behind its sched feature, "
                         "one guest per preset switching them (cells gated:<policy>)")
    ap.add_argument("--image", action="append", default=[], metavar="POLICY=IMAGE",
                    help="boot IMAGE for POLICY (or gated) instead of asking build-kernel.sh "
                         "(repeatable)")
    ap.add_argument("--cases", action="append", default=[], metavar="[PRESET=]FILE",
                    help="a wakebench run config whose kernel-placed cases run instead of "
                         "configs/lab/<preset>.json: on every preset, or PRESET=FILE on one "
                         "(repeatable); its path, sha256 and git state go into matrix.json")
    ap.add_argument("--out", help="matrix directory (default results/lab/matrix-<time>); one "
                                  "<preset>/<policy>/ per cell")
    ap.add_argument("--rerun", action="store_true", help="run cells whose results exist again")
    ap.add_argument("--no-run", action="store_true",
                    help="only re-render from the cells that exist (no guest is booted)")
    ap.add_argument("--aa", metavar="DIR",
                    help="another run of the matrix (its --out): mainline's own shift between the "
                         "two runs, per row, is the floor under which a patched kernel's shift "
                         "counts as none, and its own TV the gated kernel's fidelity allowance")
    ap.add_argument("--doc", help="also put the table between the matrix markers of this file "
                                  "(docs/lab-validation.md)")
    ap.add_argument("--wakebench", help="wakebench binary (as for one guest)")
    ap.add_argument("--guest-wakebench", help="wakebench binary of arm64 guests (as for one guest)")
    ap.add_argument("--accel", choices=("tcg", "kvm"), default="tcg",
                    help="qemu accelerator of every guest (default tcg; kvm where it works: no "
                         "emulation-only alternatives, see the README)")
    ap.add_argument("--timeout", type=int, default=1800,
                    help="per guest, s (default 1800; the gated guest, which runs every case "
                         "once per setting, gets it times the settings)")
    ap.add_argument("--repetitions", type=int, default=REPETITIONS,
                    help="fresh pairs per kernel-placed case (default %(default)s; the lab "
                         "configs' own count is 3)")
    ap.add_argument("--no-trace", action="store_true",
                    help="do not record the wakeups (by default every guest runs `wakebench run "
                         "--trace-wakeups`, so a cell that falls short carries its wakeup paths "
                         "and its migrations inside and outside wakeups)")
    return ap


def checked(args):
    """(presets, kernels, images, aa, configs) from the arguments, each checked before any guest
    runs (LabError in one line)."""
    presets = [p for p in args.presets.split(",") if p] if args.presets else \
        [p for p in PRESETS if qemu.preset_arch(p) == args.arch]
    for p in presets:
        if p not in PRESETS:
            raise LabError(f"--presets: unknown preset {p} (one of {', '.join(PRESETS)})")
    kernels = [k for k in args.kernels.split(",") if k]
    known = KERNEL_POLICIES + (GATED,)
    for k in kernels:
        if k not in known:
            raise LabError(f"--kernels: unknown kernel {k} (one of {', '.join(known)})")
    images = parse_images(args.image)
    configs = parse_cases(args.cases, presets)
    aa = {p: aa_observed(args.aa, p, configs[p]) for p in presets} if args.aa else {}
    if args.repetitions < 1:
        raise LabError(f"--repetitions: {args.repetitions} is not a positive count")
    return presets, kernels, images, aa, configs


def aa_observed(aa_dir, preset, config):
    """Mainline's observed class shares in the other run of the matrix, which must have run the
    same cases file (LabError in one line)."""
    path = Path(aa_dir) / preset / "mainline" / "results.json"
    if not path.is_file():
        raise LabError(f"--aa {aa_dir}: no {preset}/mainline/results.json (another run "
                       "of the matrix over the same presets)")
    results = resultset.load(path)
    observed = observed_classes(results)
    ran = str(results.environment.get("config_hash", "")).removeprefix("sha256:")
    if ran and ran != hashlib.sha256(Path(config).read_bytes()).hexdigest():
        raise LabError(f"--aa {aa_dir}: {preset}/mainline ran another config than {config} "
                       f"(sha256 {ran[:16]})")
    return observed


def columns(kernels):
    """The table's columns: each kernel, the gated one as one column per setting."""
    return [c for k in kernels for c in
            ([cell_name(p) for p, _ in settings()] if k == GATED else [k])]


def main(argv):
    args = parser().parse_args(argv)
    presets, kernels, images, aa, configs = checked(args)
    if args.accel == "kvm" and not args.no_run:
        qemu.check_kvm()  # one line before any guest, not one failure per guest
    run_args = [f"--benchmark_filter={RUN_FILTER}", f"--benchmark_repetitions={args.repetitions}"]
    if not args.no_trace:
        run_args.append("--trace-decisions")  # --trace-wakeups and the kernel's decisions
    wakebench = find_wakebench(args.wakebench)
    out = Path(args.out) if args.out else (
        RESULTS / "lab" / f"matrix-{datetime.datetime.now():%Y%m%d-%H%M%S}")
    matrix = {"kernels": kernels, "columns": columns(kernels), "cells": {p: {} for p in presets},
              "kernel_meta": {}, "cases": {p: case_record(configs[p]) for p in presets}}
    # Kernel by kernel (each image is built or found once), every preset on each.
    for kernel in kernels:
        for preset in presets:
            guest = out / preset / kernel
            why = None
            if not args.no_run and (args.rerun or not ran(guest, kernel)):
                why = run_cell(args, preset, kernel, images, wakebench, configs[preset], guest,
                               run_args)
            ctx = types.SimpleNamespace(wakebench=wakebench, matrix=matrix,
                                        record=matrix["cases"][preset])
            if kernel == GATED:
                for policy, _ in settings():
                    matrix["cells"][preset][cell_name(policy)] = (
                        {"missing": why} if why else collect_gated(ctx, guest, policy))
            else:
                matrix["cells"][preset][kernel] = (
                    {"missing": why} if why else collect(ctx, guest, kernel))
    judge(matrix, out, aa, args.aa)
    table = render_document(matrix)
    out.mkdir(parents=True, exist_ok=True)
    for cells in matrix["cells"].values():
        for cell in cells.values():
            for k in ("report", "observed", "discriminating"):
                cell.pop(k, None)
    write_atomic(out / "matrix.json", json.dumps(matrix, indent=1) + "\n")
    write_atomic(out / "matrix.md", table)
    if args.doc:
        update_doc(args.doc, table, args.arch)
    print(table, end="")
    log(f"matrix in {out}/matrix.md")
    return 0


def ran(guest, kernel):
    """Whether the cell's guest already brought its results back."""
    return (guest / ("results-ab0.json" if kernel == GATED else "results.json")).is_file()


def run_cell(args, preset, kernel, images, wakebench, config, guest, run_args):
    """Boots one guest (the gated kernel's with the --ab settings); the reason when its kernel
    cannot be had (its cells are left out, the others run), else None."""
    topo = topology_args(preset)
    try:
        image, pol, info = resolve_kernel(images.get(kernel), kernel, arch=topo["arch"])
        if pol != kernel:
            raise LabError(f"{image} runs policy {pol}, not {kernel}")
    except LabError as e:
        log(f"{preset} x {kernel}: no kernel: {e}")
        return f"no kernel: {e}"
    gated = kernel == GATED
    # --trace-decisions: each setting's side file (about 60 MB for the searched cases; wakebench
    # writes it as it goes) sits in the guest's /tmp until the guest ends: 128 MiB more per set.
    sets = len(settings()) if gated else 1
    mem = 512 + 128 * sets if "--trace-decisions" in run_args else 512
    plan = GuestPlan(kernel=image, policy=pol, lab_kernel=info, wakebench=wakebench,
                     config=config, out=guest, mem=mem,
                     timeout=args.timeout * (len(settings()) if gated else 1),
                     run_args=run_args + (ab_args() if gated else []), predict=not gated,
                     accel=args.accel, **topo,
                     guest_wakebench=find_guest_wakebench(args.guest_wakebench, topo["arch"],
                                                          wakebench))
    run_guest(plan)
    return None


def case_record(config):
    """What matrix.json says of a preset's cases file: path (as shown), sha256, git state."""
    rec = provenance(config)
    path = Path(rec["path"])
    rec["shown"] = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)
    rec["wakebench"], rec["first_run"] = [], None
    return rec


def note_run(record, env, where):
    """The cell's wakebench commit and start time (its set's `environment`) into the preset's
    cases record; the reason the cell does not count when it ran another config than the
    record's."""
    sha = (env.get("wakebench") or {}).get("git_sha")
    if sha and sha not in record["wakebench"]:
        record["wakebench"].append(sha)
    when = env.get("captured_at")
    if isinstance(when, str) and (record["first_run"] is None or when < record["first_run"]):
        record["first_run"] = when
    ran_hash = str(env.get("config_hash", "")).removeprefix("sha256:")
    if ran_hash != record["sha256"]:
        return (f"{where} ran another config (sha256 {ran_hash[:16] or 'unknown'}), not "
                f"{record['shown']}: --rerun runs it")
    return None


def collect(ctx, cell, policy, kernel=None):
    """The agreement of one cell from its results.json, recomputed with the current model; the
    cell's confusion rows and observed class shares ride along."""
    kernel = kernel or policy
    results = cell / "results.json"
    if not results.is_file():
        return {"missing": "not run" if not cell.exists() else "no results (see lab-summary.json)"}
    data = resultset.load(results)
    info = data.environment.get("lab_kernel") or {}
    if info.get("policy", kernel) != kernel:
        raise LabError(f"{results}: ran policy {info.get('policy')}, not {kernel}")
    other = note_run(ctx.record, data.environment, str(cell))
    if other:
        return {"missing": other}
    ctx.matrix["kernel_meta"].setdefault(kernel, {k: v for k, v in info.items()
                                                  if k not in ("setting", "features_on")})
    rep = agreement(ctx.wakebench, results, cell, policy)
    if "unavailable" in rep:
        return {"missing": rep["unavailable"]}
    pred = json.loads((cell / "predict.json").read_text())
    pairs = sorted({len(c.repetitions) for c in data.cases if c.kernel})
    traces = {c.name: c.trace for c in data.cases if c.trace and "paths" in c.trace}
    ok = {c.name for c in data.cases if c.ok}
    return {"report": json.loads((cell / "agreement.json").read_text()), "pairs": pairs,
            "replay": replay.cell_replay(ctx.wakebench, results, policy),
            "traces": traces, "confusion": confusion.cell_confusion(pred, data, policy),
            "observed": {n: v for n, v in observed_classes(data).items() if n in ok},
            "discriminating": discriminating(pred)}


def discriminating(pred):
    """The case names whose predictions discriminate some pair of policies, or None when the
    predictions carry no `discriminates` (a wakebench before it)."""
    entries = [e for e in pred.get("mechanisms", []) if e.get("measured")]
    if any("discriminates" not in e for e in entries):
        return None
    return [e["case"] for e in entries if e["discriminates"]]


def collect_gated(ctx, guest, policy):
    """One setting of the gated guest: its result set (`results-ab<k>.json`) labelled into
    <guest>/<policy>/results.json, failed unless every repetition read back the intended feature
    state, then collected like any cell against `policy`'s model."""
    k = [p for p, _ in settings()].index(policy)
    src = guest / f"results-ab{k}.json"
    if not src.is_file():
        return {"missing": "not run" if not guest.exists() else
                f"no {src.name} (see {guest}/lab-summary.json)"}
    data = resultset.load(src)
    problems = read_back_problems(data, k)
    if problems:
        return {"missing": "the feature read-back: " + "; ".join(problems[:3])}
    summary = json.loads((guest / "lab-summary.json").read_text())
    plan = types.SimpleNamespace(kernel=summary.get("kernel"), name=summary.get("name"),
                                 accel=summary.get("accel", "tcg"),
                                 lab_kernel=dict(summary.get("lab_kernel") or {}, setting=k,
                                                 features_on=policy))
    label_results(data.doc, summary.get("qemu_command") or [], plan)
    (guest / policy).mkdir(exist_ok=True)
    side = guest / f"results-ab{k}.decisions.txt"  # the name the set gives it
    if side.is_file():
        write_atomic(guest / policy / side.name, side.read_text())
    write_atomic(guest / policy / "results.json", json.dumps(data.doc, indent=1) + "\n")
    return collect(ctx, guest / policy, policy, GATED)


def judge(matrix, out, aa, aa_dir):
    """Per preset: the rows of every cell (shifts against mainline's run, the gated cells against
    gated:mainline's), and the gated kernel's fidelity to the per-patch kernels."""
    order = topology_order(out)
    matrix["fidelity"] = []
    for preset, per_kernel in matrix["cells"].items():
        floors = None
        if aa_dir:
            floors = aa_floors(order, (per_kernel.get("mainline") or {}).get("report"),
                               aa[preset])
            matrix["aa"] = str(aa_dir)
        for name, cell in per_kernel.items():
            if cell.get("report"):
                base = per_kernel.get(cell_name("mainline") if name.startswith(GATED) else
                                      "mainline") or {}
                cell["rows"] = cell_rows(cell["report"], base.get("report"), order,
                                         cell.pop("traces", None), floors)
        for policy, _ in settings() if cell_name("mainline") in per_kernel else ():
            matrix["fidelity"].append([preset, policy, fidelity_of(per_kernel, policy,
                                                                   aa.get(preset))])


def fidelity_of(per_kernel, policy, aa):
    """gated:<policy> against the per-patch kernel <policy> on one preset (fidelity.fidelity)."""
    gated, patch = per_kernel.get(cell_name(policy)) or {}, per_kernel.get(policy) or {}
    main = per_kernel.get("mainline") or {}
    for what, cell in ((cell_name(policy), gated), (policy, patch), ("mainline", main)):
        if "observed" not in cell:
            return {"verdict": "not tested", "why": f"no {what} cell", "cases": []}
    if patch.get("discriminating") is None:
        return {"verdict": "not tested", "why": f"{policy}'s predictions carry no "
                                                "`discriminates`", "cases": []}
    return fidelity(gated["observed"], patch["observed"], main["observed"], aa,
                    patch["discriminating"])


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
            "Per cell: the predictor's verdict for the kernel's own policy and the strict "
            "agreement of its placements with that policy's steady state (1 - total variation "
            "distance, round trips of " + pairs_text(matrix) + " fresh pairs x 2000): MATCH "
            "within 0.25; EXPLAINED, a strict miss that a mix with the model's alternatives "
            "brings within 0.25 (rNN%: the agreement with that mix); NO-PREDICTION, the model's "
            "range admits 90% or more of what the cpuset allows, so it could not have failed; "
            "MISS. Only MATCH is agreement; **bold** marks every other word. Then for a patched "
            "kernel the observed / predicted shift against mainline's run on the same preset: "
            "the mean distance of the wakee from the waker in class steps (same-cpu 0, "
            "smt-sibling 1, ...; negative = closer to the waker), predicted from the two steady "
            "states alone; a shift under 0.1 " + floor + "counts as none. Where the steady states "
            "differ: as predicted, not seen or wrong way; where they are equal: none or "
            "unpredicted. A case marked (e) depends on emulation: the policies it tells apart "
            "differ without the emulation-only alternatives (the list below the confusion "
            "table).", "", "Kernels:"]
    head += [kernel_line(p, matrix["kernel_meta"].get(p, {})) for p in matrix["kernels"]]
    head += ["", "Cases (the file each preset ran, and whether it was committed unchanged before "
             "the guests ran):"]
    head += [x for p, rec in (matrix.get("cases") or {}).items()
             for x in provenance_lines(p, rec)]
    return "\n".join(head + [""] + replay_section(matrix)) + "\n\n" + render(matrix) + \
        "\n".join(extra_sections(matrix))


def replay_section(matrix):
    """The decisions first (wblab/replay.py): each cell's records under every policy's model."""
    cells = [(preset, name, name.split(":")[-1], cell["replay"])
             for preset, per_kernel in matrix["cells"].items()
             for name, cell in per_kernel.items() if cell.get("replay")]
    if not cells:
        return []
    return ["#### Replay: the kernel's own decisions under each policy's model", ""] + \
        confusion.wrap(
            "Per cell, every wakeup of the cases' tasks (sched_waking) and the decision records "
            "the kernel's event gave them, replayed inputs only (`wakebench replay`): the share "
            f"of wakeups whose CPU and rule each model reproduced (bold: the kernel's own policy; "
            f"goal {replay.GOAL}%; a wakeup without a record counts as a disagreement). The "
            "other columns are the wrong pairings, each with the records on which its model and "
            "the kernel's own policy's decide differently and how many of those it matched: a "
            "faithful kernel matches its own model on all of them and the other on none.", "") + [""] + replay.render(cells) + [""]


def extra_sections(matrix):
    """The kernel named from its placements (one row per column of the table), the gated
    kernel's fidelity and the dropped cases."""
    per_row = {k: [(p, r) for p, pk in matrix["cells"].items()
                   for r in ((pk.get(k) or {}).get("confusion") or {}).get("rows", [])]
               for k in matrix.get("columns") or matrix["kernels"]}
    summaries = {k: confusion.summary([r for _, r in rows]) for k, rows in per_row.items()}
    matrix["confusion"] = summaries
    lines = confusion.render(summaries, per_row)
    if matrix.get("fidelity"):
        lines += ["#### The gated kernel against the per-patch kernels", ""]
        lines += confusion.wrap(
            "Per discriminating case, the strict TV between the observed class shares of the "
            "gated kernel with one feature on (gated:mainline: all off) and the per-patch "
            "kernel's, against mainline's own run-to-run TV on that case (this run against "
            "--aa's) plus 0.05. Every repetition of a gated cell read its feature state back as "
            "intended (else the cell failed above).", "")
        lines += [""] + fidelity_lines(matrix["fidelity"]) + [""]
    dropped = [(p, k, d) for p, pk in matrix["cells"].items() for k, cell in pk.items()
               for d in ((cell or {}).get("confusion") or {}).get("dropped", [])]
    return lines + confusion.dropped_lines(dropped)
