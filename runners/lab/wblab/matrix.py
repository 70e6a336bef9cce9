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

from . import RESULTS, LabError, log, write_atomic
from . import qemu
from .cases import parse_cases
from .fidelity import GATED, ab_args, cell_name, settings
from .guest import GuestPlan, run_guest
from .kernel import KERNEL_POLICIES, find_guest_wakebench, find_wakebench, resolve_kernel
from .matrix_cells import Cell, Matrix
from .matrix_collect import aa_observed, case_record, cases_ran, collect, collect_gated, \
    topology_order
from .matrix_document import render_document
from .matrix_judge import judge
from .registry import BLOCKING_MECHANISMS
from .topology import topology_args

PRESETS = tuple(qemu.PRESETS)  # every preset the lab has
# The kernel-placed cases of the blocking mechanisms (spin never blocks); a regex Google
# Benchmark's filter reads both as POSIX ERE and as ECMAScript.
RUN_FILTER = "^(" + "|".join(BLOCKING_MECHANISMS) + ")/.*kernel"
# Fresh pairs per case: timing-dependent placements (a wake that finds a CPU busy for a moment) come
# per pair, so a cell's figure needs more than the lab configs' 3.
REPETITIONS = 6


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


def columns(kernels):
    """The table's columns: each kernel, the gated one as one column per setting."""
    return [c for k in kernels for c in
            ([cell_name(p) for p, _ in settings()] if k == GATED else [k])]


def main(argv):
    args = parser().parse_args(argv)
    presets, kernels, images, aa, configs = checked(args)
    if args.accel == "kvm" and not args.no_run:
        qemu.check_kvm()  # one line before any guest, not one failure per guest
    wakebench = find_wakebench(args.wakebench)
    out = Path(args.out) if args.out else (
        RESULTS / "lab" / f"matrix-{datetime.datetime.now():%Y%m%d-%H%M%S}")
    records = {p: case_record(configs[p]) for p in presets}
    runs = run_and_collect(args, kernels, presets, images, wakebench, configs, records, out)
    matrix = judge(draft(kernels, presets, records, runs), topology_order(out), aa, args.aa)
    table = render_document(matrix)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "matrix.json", json.dumps(matrix.to_json(), indent=1) + "\n")
    write_atomic(out / "matrix.md", table)
    if args.doc:
        update_doc(args.doc, table, args.arch)
    print(table, end="")
    log(f"matrix in {out}/matrix.md")
    return 0


def run_and_collect(args, kernels, presets, images, wakebench, configs, records, out):
    """[(preset, column, Cell)] in the order the cells ran: kernel by kernel (each image is built
    or found once), every preset on each; a guest runs unless --no-run or it already ran."""
    run_args = [f"--benchmark_filter={RUN_FILTER}", f"--benchmark_repetitions={args.repetitions}"]
    if not args.no_trace:
        run_args.append("--trace-decisions")  # --trace-wakeups and the kernel's decisions
    runs = []
    for kernel in kernels:
        for preset in presets:
            guest = out / preset / kernel
            why = None
            if not args.no_run and (args.rerun or not ran(guest, kernel)):
                why = run_cell(args, preset, kernel, images, wakebench, configs[preset], guest,
                               run_args)
            if kernel == GATED:
                runs += [(preset, cell_name(policy), Cell(why) if why else
                          collect_gated(wakebench, records[preset], guest, policy))
                         for policy, _ in settings()]
            else:
                runs.append((preset, kernel, Cell(why) if why else
                             collect(wakebench, records[preset], guest, kernel)))
    return runs


def draft(kernels, presets, records, runs):
    """The Matrix of the collected cells, before judging: each kernel's metadata from its first
    cell that read, each preset's cases record with what ran it."""
    cells = {p: {} for p in presets}
    meta = {}
    for preset, name, cell in runs:
        cells[preset][name] = cell
        if cell.note.kernel is not None:
            meta.setdefault(cell.note.kernel, cell.note.kernel_info)
    cases = {p: cases_ran(records[p], [c.note for q, _, c in runs if q == p]) for p in presets}
    return Matrix(tuple(kernels), tuple(columns(kernels)), cells, meta, cases)


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


