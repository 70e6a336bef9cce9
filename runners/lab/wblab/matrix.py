"""`wakebench-lab matrix`: every preset x kernel (mainline and each patch, from build-kernel.sh)
runs the blocking mechanisms kernel-placed, each held against its own policy's model; the table
gives per cell the agreement, the observed shift against mainline's run on the same preset and the
model's predicted shift. Cells whose results.json exists are not run again (--rerun forces it);
their agreement is recomputed with the current wakebench, so a model fix re-renders the matrix
without booting anything. With --runs K, two kernels' guests alternate on each preset (K runs
each) and `wakebench compare` judges them at the run level (matrix_runs.py). Progress goes to
stderr with an ETA (progress.py); each guest's own lines go to its folder's lab.log."""
import contextlib
import datetime
import json
from pathlib import Path

from . import REPO, RESULTS, LabError, log, write_atomic
from . import qemu
from .cases import case_set_record, parse_cases
from .fidelity import GATED, ab_args, cell_name, settings
from .guest import GuestPlan, check_mem, run_guest
from .inputs import ArgumentParser
from .kernel import KERNEL_POLICIES, MAINLINE, find_guest_wakebench, find_wakebench, is_user, \
    resolve_kernel, resolve_user, user_kernel
from .matrix_cells import Cell, Matrix
from .matrix_collect import aa_observed, cases_ran, collect, collect_gated, \
    topology_order
from .matrix_document import render_document
from .matrix_judge import judge
from .matrix_runs import check_runs, guest_order, run_dir, runs_verdict
from .progress import Progress, Step
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


def parse_kernels(spec):
    """--kernels -> (the columns in order, {column: (kind, path)} of the user kernels), or
    LabError in one line: an unknown name, a patch or tree not there, two of one column."""
    known = KERNEL_POLICIES + (GATED,)
    kernels, users = [], {}
    for k in (k for k in spec.split(",") if k):
        user = user_kernel(k)
        if not user and k not in known:
            raise LabError(f"--kernels: unknown kernel {k} (one of {', '.join(known)}, or "
                           "patch:FILE, tree:DIR)")
        column = user[0] if user else k
        if column in kernels:
            raise LabError(f"--kernels: {column} twice")
        kernels.append(column)
        if user:
            users[column] = user[1:]
    return kernels, users


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
    ap = ArgumentParser(prog="wakebench-lab matrix", description=__doc__)
    ap.add_argument("--arch", choices=list(qemu.ARCHES), default="x86_64",
                    help="the guests' architecture: the default presets are its own (default "
                         "x86_64)")
    ap.add_argument("--presets",
                    help="comma-separated presets (default: every preset of --arch the lab can "
                         f"boot, none that waits for a shim; {', '.join(PRESETS)})")
    ap.add_argument("--kernels", default=",".join(KERNEL_POLICIES),
                    help=f"comma-separated policies (default {','.join(KERNEL_POLICIES)}); each "
                         "kernel comes from build-kernel.sh (built unless cached); "
                         f"'{GATED}': the one kernel with every policy behind its sched feature, "
                         "one guest per preset switching them (cells gated:<policy>); "
                         "patch:FILE / tree:DIR: your patch on the lab's 6.12 or your 6.12 tree "
                         "(build-kernel.sh --patch / --kernel-tree), held to mainline's model, "
                         "its column patch:<name> / tree:<name>")
    ap.add_argument("--image", action="append", default=[], metavar="POLICY=IMAGE",
                    help="boot IMAGE for POLICY (or gated) instead of asking build-kernel.sh "
                         "(repeatable)")
    ap.add_argument("--cases", action="append", default=[], metavar="[PRESET=]FILE",
                    help="a wakebench run config whose kernel-placed cases run instead of "
                         "configs/lab/<preset>.json (with a patch: or tree: kernel, instead of "
                         "the preset's searched cases and the loaded cases of its CPU count, "
                         "configs/lab/search/<preset>.json and loads-<n>cpu.json): on every "
                         "preset, or PRESET=FILE on one (repeatable); its path, sha256 and git "
                         "state go into matrix.json")
    add_run_args(ap)
    return ap


def add_run_args(ap):
    """Where the matrix goes, how it is judged, and how each guest runs."""
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
    ap.add_argument("--runs", type=int, default=1, metavar="K",
                    help="run each of two kernels K times on every preset, their guests "
                         "alternated (A, B, A, B ...), and judge A against B at the run level "
                         "with `wakebench compare A1..AK -- B1..BK` (default 1: no A/B verdict)")
    ap.add_argument("--mem", type=int, metavar="MIB",
                    help="RAM of every guest (default 512 MiB, plus 512 MiB per result set when "
                         "the guest records decisions: half of it is its /tmp, which holds them, "
                         "about 550 bytes a wakeup on 16 CPUs, until it ends)")
    ap.add_argument("--no-trace", action="store_true",
                    help="do not record the wakeups (by default every guest runs `wakebench run "
                         "--trace-wakeups`, so a cell that falls short carries its wakeup paths "
                         "and its migrations inside and outside wakeups)")


def checked(args, out):
    """(presets, kernels, images, aa, configs) from the arguments, each checked before any guest
    runs (LabError in one line); a patch kernel's default cases are written under `out`."""
    # The default: every bootable preset with a suite (configs/lab/<preset>.json) unless --cases
    # gives one.
    presets = [p for p in args.presets.split(",") if p] if args.presets else \
        [p for p in qemu.bootable_presets(args.arch)
         if args.cases or (REPO / f"configs/lab/{p}.json").is_file()]
    for p in presets:
        if p not in PRESETS:
            raise LabError(f"--presets: unknown preset {p} (one of {', '.join(PRESETS)})")
        qemu.check_bootable(p)
    kernels, users = parse_kernels(args.kernels)
    images = dict(parse_images(args.image), **users)
    configs = parse_cases(args.cases, presets, bool(users), out)
    aa = {p: aa_observed(args.aa, p, configs[p].path) for p in presets} if args.aa else {}
    if args.mem is not None:
        check_mem(args.mem)
    if args.repetitions < 1:
        raise LabError(f"--repetitions: {args.repetitions} is not a positive count")
    check_runs(args.runs, kernels)
    return presets, kernels, images, aa, configs


def columns(kernels):
    """The table's columns: each kernel, the gated one as one column per setting."""
    return [c for k in kernels for c in
            ([cell_name(p) for p, _ in settings()] if k == GATED else [k])]


def main(argv):
    args = parser().parse_args(argv)
    out = out_dir(args)
    presets, kernels, images, aa, configs = checked(args, out)
    if args.accel == "kvm" and not args.no_run:
        qemu.check_kvm()  # one line before any guest, not one failure per guest
    wakebench = find_wakebench(args.wakebench)
    records = {p: case_set_record(configs[p]) for p in presets}
    runs = run_and_collect(args, kernels, presets, images, wakebench, configs, records, out)
    verdicts = {p: runs_verdict(wakebench, out / p, kernels, args.runs, records[p])
                for p in presets} if args.runs > 1 else {}
    matrix = judge(draft(kernels, presets, records, runs, verdicts), topology_order(out), aa,
                   args.aa)
    table = render_document(matrix)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "matrix.json", json.dumps(matrix.to_json(), indent=1) + "\n")
    write_atomic(out / "matrix.md", table)
    if args.doc:
        update_doc(args.doc, table, args.arch)
    print(table, end="")
    log(f"matrix in {out}/matrix.md")
    unjudged = [p for p, v in verdicts.items() if v.missing]
    if unjudged:
        log(f"the A/B verdict was not given on {', '.join(unjudged)} (matrix.md says why): exit 1")
    return 1 if unjudged else 0


def out_dir(args):
    """--out, or a new folder under results/lab named by the time."""
    return Path(args.out) if args.out else (
        RESULTS / "lab" / f"matrix-{datetime.datetime.now():%Y%m%d-%H%M%S}")


def run_and_collect(args, kernels, presets, images, wakebench, configs, records, out):
    """[(preset, column, Cell)] of every kernel's first run on every preset, in the order the
    guests ran (matrix_runs.guest_order); a guest runs unless --no-run or it already ran. Each
    guest is a step of the progress on stderr."""
    run_args = [f"--benchmark_filter={RUN_FILTER}", f"--benchmark_repetitions={args.repetitions}"]
    if not args.no_trace:
        run_args.append("--trace-decisions")  # --trace-wakeups and the kernel's decisions
    order = guest_order(kernels, presets, args.runs)
    steps = [guest_step(args, out, *g) for g in order]
    cells = []
    with Progress(steps) as progress:
        for (preset, kernel, i), step in zip(order, steps):
            progress.begin(step)
            guest = run_dir(out / preset / kernel, i)
            with guest_log(guest, step.boots):
                why, problems = run_cell(args, preset, kernel, images, wakebench,
                                         configs[preset].path, guest, run_args,
                                         progress.line) if step.boots else (None, [])
                if i == 1:
                    cells += collected_cells(wakebench, records[preset], preset, kernel, guest,
                                             why)
            progress.end(step, step_outcome(args, step, guest, kernel, why, problems),
                         booted=step.boots and why is None, problem=bool(why or problems))
    return cells


def collected_cells(wakebench, record, preset, kernel, guest, why):
    """The cells of one kernel's guest on one preset: the gated guest's one per setting."""
    if kernel == GATED:
        return [(preset, cell_name(policy), Cell(why) if why else
                 collect_gated(wakebench, record, guest, policy)) for policy, _ in settings()]
    policy = MAINLINE if is_user(kernel) else kernel  # no model knows a user kernel
    return [(preset, kernel, Cell(why) if why else
             collect(wakebench, record, guest, policy, kernel))]


def guest_step(args, out, preset, kernel, i):
    """The progress step of one guest: its name, the cells it fills, whether it boots."""
    gated = kernel == GATED
    name = f"{preset} x {kernel}" + (f" run {i}/{args.runs}" if args.runs > 1 else "") + \
        (f" ({len(settings())} settings)" if gated else "")
    boots = not args.no_run and (args.rerun or not ran(run_dir(out / preset / kernel, i), kernel))
    return Step(name, len(settings()) if gated else 1, boots)


def step_outcome(args, step, guest, kernel, why, problems):
    """What one guest's step came to, in a phrase."""
    if not step.boots:
        there = ran(guest, kernel)
        if args.no_run:
            return "--no-run: read back" if there else "--no-run: not run"
        return "already ran (--rerun runs it again)"
    if why:
        return why
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"PROBLEM: {problems[0]}{more}" if problems else "ok"


@contextlib.contextmanager
def guest_log(guest, boots):
    """What a guest's run and its reading back print (its checks, its agreement) goes to
    <guest>/lab.log, appended, so that the terminal shows the progress; nothing is made for a
    guest that neither boots nor exists."""
    if not boots and not guest.is_dir():
        yield
        return
    guest.mkdir(parents=True, exist_ok=True)
    with open(guest / "lab.log", "a") as f, contextlib.redirect_stdout(f), \
            contextlib.redirect_stderr(f):
        print(f"--- {datetime.datetime.now():%Y-%m-%d %H:%M:%S} "
              + ("boot" if boots else "read back"), flush=True)
        yield


def draft(kernels, presets, records, runs, verdicts=None):
    """The Matrix of the collected cells, before judging: each kernel's metadata from its first
    cell that read, each preset's cases record with what ran it, the A/B verdicts over runs."""
    cells = {p: {} for p in presets}
    meta = {}
    for preset, name, cell in runs:
        cells[preset][name] = cell
        if cell.note.kernel is not None:
            meta.setdefault(cell.note.kernel, cell.note.kernel_info)
    cases = {p: cases_ran(records[p], [c.note for q, _, c in runs if q == p]) for p in presets}
    return Matrix(tuple(kernels), tuple(columns(kernels)), cells, meta, cases,
                  runs=verdicts or {})


def ran(guest, kernel):
    """Whether the cell's guest already brought its results back."""
    return (guest / ("results-ab0.json" if kernel == GATED else "results.json")).is_file()


def kernel_image(kernel, images, arch):
    """(image, the policy whose model the guest is held to, environment.lab_kernel) of a column:
    a policy's (--image's, else build-kernel.sh's) or a user kernel's (images[column]: its
    (kind, path))."""
    if is_user(kernel):
        return resolve_user(kernel, *images[kernel], arch=arch)
    image, pol, info = resolve_kernel(images.get(kernel), kernel, arch=arch)
    if pol != kernel:
        raise LabError(f"{image} runs policy {pol}, not {kernel}")
    return image, pol, info


def run_cell(args, preset, kernel, images, wakebench, config, guest, run_args, relay=None):
    """Boots one guest (the gated kernel's with the --ab settings), its console's lines to
    `relay`; (the reason when its kernel cannot be had, its cells left out and the others run,
    else None; the guest's problems)."""
    topo = topology_args(preset)
    try:
        image, pol, info = kernel_image(kernel, images, topo["arch"])
    except LabError as e:
        log(f"{preset} x {kernel}: no kernel: {e}")
        return f"no kernel: {e}", []
    gated = kernel == GATED
    # --trace-decisions: each setting's side file (60-150 MB for the lab's configs; wakebench
    # writes it as it goes) sits in the guest's /tmp, half its RAM, until the guest ends: 512 MiB
    # more per set (qemu touches guest RAM only as the guest uses it).
    sets = len(settings()) if gated else 1
    mem = args.mem or (512 + 512 * sets if "--trace-decisions" in run_args else 512)
    plan = GuestPlan(kernel=image, policy=pol, lab_kernel=info, wakebench=wakebench,
                     config=config, out=guest, mem=mem,
                     timeout=args.timeout * (len(settings()) if gated else 1),
                     run_args=run_args + (ab_args() if gated else []), predict=not gated,
                     accel=args.accel, relay=relay, **topo,
                     guest_wakebench=find_guest_wakebench(args.guest_wakebench, topo["arch"],
                                                          wakebench))
    for old in guest.glob("results*.json"):  # a guest that fails must not leave an older set
        old.unlink()
    _, problems = run_guest(plan)
    return None, problems


