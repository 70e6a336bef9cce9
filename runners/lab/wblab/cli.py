"""`wakebench-lab [options] [-- run args]`: one guest; `wakebench-lab matrix [options]`: presets x
kernels (matrix.py); `wakebench-lab tables ...`: docs/lab-validation.md's headline tables from
the matrix files (doctables.py); `wakebench-lab renumber ...`: a config carried to a renumbered
twin preset (renumber.py); `wakebench-lab twins ...`: where each policy put the wakee on two twins
(twins.py); `wakebench-lab pmu SET EVENT`: the counter check of a work_ns sweep (pmu.py).
See runners/lab/README.md."""
import shutil
import signal
import sys
from pathlib import Path

from . import HERE, REPO, LabError, qemubin
from .guest import GuestPlan, check_mem, default_out, run_guest
from .initramfs import static_busybox
from .inputs import ArgumentParser
from .registry import FILE as REGISTRY_FILE
from .kernel import KERNEL_POLICIES, build_user_kernel, cache_dir, find_guest_wakebench, \
    find_kernel, find_wakebench, resolve_kernel
from .progress import Relay
from .qemu import ACCELERATORS, ARCHES, PRESETS, accel_args, check_bootable, check_kvm, \
    preset_arch
from .topology import topology_args


def parser():
    ap = ArgumentParser(
        prog="wakebench-lab",
        description="Run wakebench in a qemu guest (TCG, or KVM with --accel kvm) with a chosen "
                    "CPU topology and kernel, "
                    "and hold its placements against the model of the policy that kernel runs. "
                    "`wakebench-lab matrix --help`: every preset x kernel.",
        epilog="Presets: " + "; ".join(f"{k}: {v['doc']}" for k, v in PRESETS.items())
        + ". " + files_line())
    add_machine_args(ap)
    add_kernel_args(ap)
    add_run_args(ap)
    return ap


def add_machine_args(ap):
    """The guest's machine: its preset or its qemu topology, accelerator and memory."""
    ap.add_argument("--preset", choices=sorted(PRESETS))
    ap.add_argument("--smp", help="free-form qemu -smp (overrides the preset's)")
    ap.add_argument("--numa", action="append", default=None, metavar="ARG",
                    help="free-form qemu -numa argument, repeatable (overrides the preset's); "
                         "node entries without mem/memdev get an equal share of --mem")
    ap.add_argument("--cpu", help="qemu -cpu model (default Skylake-Server)")
    ap.add_argument("--accel", choices=ACCELERATORS, default="tcg",
                    help="qemu accelerator: tcg (the default; timings EMULATED) or kvm (needs "
                         "/dev/kvm; timings a virtual machine's, not labelled emulated)")
    ap.add_argument("--tcg-thread", choices=("single", "multi"),
                    help="qemu TCG threading: one host thread round-robins the vCPUs (single, "
                         "the default) or one host thread per vCPU (multi); see the README")
    ap.add_argument("--mem", type=int, default=512, help="guest RAM in MiB (default 512)")
    ap.add_argument("--icount", type=int, metavar="SHIFT",
                    help="TCG: qemu -icount shift=SHIFT (one instruction per 2^SHIFT ns of virtual "
                         "time; serialises the guest, for counting instructions under arm64's "
                         "emulated PMU, never for the matrix)")


def add_kernel_args(ap):
    """The guest's kernel: a built policy, an image, your patch or tree, and its settings."""
    ap.add_argument("--policy", choices=KERNEL_POLICIES,
                    help="boot Debian's 6.12 with this policy's patch (runners/lab/"
                         "build-kernel.sh builds it unless cached) and hold the guest to its "
                         "model; with --kernel: the model for an image without meta.json")
    ap.add_argument("--lockdep", action="store_true",
                    help="with --policy: the PROVE_LOCKING/PROVE_RCU build of that kernel")
    ap.add_argument("--kernel", help="guest kernel image (a meta.json beside it names its policy; "
                                     "default: newest /boot/vmlinuz-*, else the one "
                                     "runners/lab/fetch-kernel.sh cached)")
    ap.add_argument("--patch", metavar="FILE",
                    help="boot Debian's 6.12 with your patch and the decision event "
                         "(build-kernel.sh --patch builds it unless cached), held to mainline's "
                         "model (KERNELS.md)")
    ap.add_argument("--kernel-tree", metavar="DIR",
                    help="boot your own 6.12.y tree, built out of tree with the event and the "
                         "lab's config (build-kernel.sh --kernel-tree), held to mainline's model")
    ap.add_argument("--append", default="", help="extra guest kernel command line")
    ap.add_argument("--no-shim", action="store_true",
                    help="boot a preset that has a shim (power9-bigcore, power10-smallcore) "
                         "without it: qemu's own firmware, whose domains fail the preset's check")
    ap.add_argument("--sched-feature", action="append", default=[], metavar="NAME",
                    help="write NAME (e.g. NO_DELAY_DEQUEUE) to the guest's "
                         "/sys/kernel/debug/sched/features before the run (repeatable)")


def add_run_args(ap):
    """What the guest runs and what comes back."""
    ap.add_argument("--wakebench", help="wakebench binary of this host, which classifies and "
                                        "predicts (and runs in an x86_64 guest; default "
                                        "$WB_BINARY, else $WB_BUILD_DIR/wakebench, else "
                                        "build/wakebench)")
    ap.add_argument("--guest-wakebench",
                    help="wakebench binary an arm64 guest runs (default "
                         "build-cross-aarch64/wakebench, what runners/cross-build.sh aarch64 "
                         "builds)")
    ap.add_argument("--config", help="suite for `wakebench run` in the guest "
                                     "(default configs/lab/<preset>.json)")
    ap.add_argument("--no-run", action="store_true",
                    help="only boot, check sysfs and run `wakebench topology --json`")
    ap.add_argument("--guest-cmd", help="shell command run in the guest instead of `wakebench "
                                        "run` (files it writes to /tmp/out come back)")
    ap.add_argument("--out", help="output directory (default results/lab/<name>-<policy>-<time>)")
    # TCG guests on a small, shared host run several times slower than on an idle one (every vCPU
    # is a host thread competing with builds): the budget is generous, and a run that ends
    # earlier costs nothing. The guest's own `run` gets the budget less 90 s to ship its results.
    ap.add_argument("--timeout", type=int, default=2400,
                    help="guest wall-clock budget in s (default 2400)")
    ap.add_argument("--no-predict", action="store_true",
                    help="skip `wakebench predict` (the agreement and the check of the guest's "
                         "sched domains against the model's)")
    ap.add_argument("--check", action="store_true",
                    help="only check the prerequisites (qemu, kernel, busybox-static, cpio, "
                         "wakebench); exit 3 naming the first one missing")
    ap.add_argument("-v", "--verbose", action="store_true", help="stream the guest console")
    ap.add_argument("run_args", nargs="*", help="after --: extra `wakebench run` arguments")


def files_line():
    """Where this lab's own files are (a checkout's, or an installed lab's under P/share)."""
    patches = sorted((HERE / "patches").glob("*.patch"))
    series = sorted((HERE / "patches" / "gated").glob("*.patch"))
    configs = sorted((REPO / "configs" / "lab").glob("*.json"))
    return (f"Files: kernel patches {HERE / 'patches'} ({len(patches)}, and {len(series)} in "
            f"the gated series); suites {REPO / 'configs' / 'lab'} ({len(configs)}); registry "
            f"{REGISTRY_FILE}.")


def check_prerequisites(args):
    """Exit status 3 and one line naming what is missing (the CTest Vm test skips with it)."""
    try:
        if args.preset:
            check_bootable(args.preset)
        if args.accel == "kvm":
            check_kvm()
        arch = preset_arch(args.preset)
        qemu = ARCHES[arch]
        qemubin.choose(qemu["qemu"], (), PRESETS.get(args.preset, {}).get("qemu"),
                       qemu["package"])
        tools = [("cpio", "cpio"), ("readelf", "binutils")]
        if arch == "arm64" and PRESETS.get(args.preset, {}).get("caches"):
            tools.append(("dtc", "device-tree-compiler"))
        for tool, pkg in tools:
            if not shutil.which(tool):
                raise LabError(f"{tool} not installed (apt-get install {pkg})")
        static_busybox(arch, cache_dir())
        kernel = find_kernel(args.kernel)
        wakebench = find_wakebench(args.wakebench)
        find_guest_wakebench(args.guest_wakebench, arch, wakebench)
    except LabError as e:
        print(f"wakebench-lab: missing prerequisite: {e}", file=sys.stderr)
        return 3
    print(f"wakebench-lab: ready (accel {args.accel}, kernel {kernel}, wakebench {wakebench})")
    return 0


def main_one(argv):
    args = parser().parse_args(argv)
    accel_args(args.accel, args.tcg_thread)  # --tcg-thread with kvm: one line, before anything
    if args.icount is not None and (args.accel != "tcg" or not 0 <= args.icount <= 10):
        raise LabError("--icount SHIFT: TCG only, SHIFT from 0 to 10")
    check_mem(args.mem)
    if args.check:
        return check_prerequisites(args)
    if args.preset:
        check_bootable(args.preset)  # a preset waiting for its shim never boots, even overridden
    if args.accel == "kvm":
        check_kvm()
    topo = topology_args(args.preset, args.smp, args.numa, args.cpu, shim=not args.no_shim)
    name = topo["name"]
    config = Path(args.config) if args.config else None  # /lab/config.json, also for --guest-cmd
    if not args.no_run and not args.guest_cmd:
        config = config or REPO / f"configs/lab/{name}.json"
    if config and not config.is_file():
        raise LabError(f"config {config} not found (free-form topologies need --config)")
    wakebench = find_wakebench(args.wakebench)
    guest_wb = find_guest_wakebench(args.guest_wakebench, topo["arch"], wakebench)
    kernel, policy, lab_kernel = chosen_kernel(args, topo["arch"])
    plan = GuestPlan(kernel=kernel, policy=policy, lab_kernel=lab_kernel, wakebench=wakebench,
                     config=config, out=Path(args.out) if args.out else
                     default_out(name, "patch" if args.patch else
                                 "tree" if args.kernel_tree else policy),
                     mem=args.mem, tcg_thread=args.tcg_thread or "single", accel=args.accel,
                     icount=args.icount,
                     append=args.append, timeout=args.timeout,
                     guest_cmd=args.guest_cmd, no_run=args.no_run, run_args=args.run_args,
                     predict=not args.no_predict, check_domains=not args.no_predict,
                     verbose=args.verbose, sched_features=args.sched_feature,
                     guest_wakebench=guest_wb, **topo)
    with Relay() as relay:
        plan.relay = relay.line
        _, problems = run_guest(plan)
    return 1 if problems else 0


def chosen_kernel(args, arch):
    """(image, model policy, environment.lab_kernel): --patch FILE or --kernel-tree DIR built by
    build-kernel.sh, else --kernel / --policy as resolve_kernel reads them."""
    user = [(k, v) for k, v in (("patch", args.patch), ("tree", args.kernel_tree)) if v]
    if not user:
        return resolve_kernel(args.kernel, args.policy, args.lockdep, arch=arch)
    given = [o for o, v in (("--patch", args.patch), ("--kernel-tree", args.kernel_tree),
                            ("--kernel", args.kernel), ("--policy", args.policy),
                            ("--lockdep", args.lockdep)) if v]
    if len(given) > 1:
        raise LabError(f"{' and '.join(given)}: give one kernel (a user kernel is held to "
                       "mainline's model)")
    kind, path = user[0]
    return resolve_kernel(str(build_user_kernel(kind, Path(path).resolve(), arch)), None,
                          arch=arch)


def raise_on_signal(signum, _frame):
    print(f"wakebench-lab: stopped by {signal.Signals(signum).name}", file=sys.stderr)
    raise SystemExit(128 + signum)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGTERM, raise_on_signal)
    signal.signal(signal.SIGHUP, raise_on_signal)
    try:
        if argv[:1] == ["matrix"]:
            from .matrix import main as matrix_main
            return matrix_main(argv[1:])
        if argv[:1] == ["pmu"]:
            from .pmu import main as pmu_main
            return pmu_main(argv[1:])
        if argv[:1] == ["twins"]:
            from .twins import main as twins_main
            return twins_main(argv[1:])
        if argv[:1] == ["renumber"]:
            from .renumber import main as renumber_main
            return renumber_main(argv[1:])
        if argv[:1] == ["whatif"]:
            from .whatif import main as whatif_main
            return whatif_main(argv[1:])
        if argv[:1] == ["floor"]:
            from .floor import main as floor_main
            return floor_main(argv[1:])
        if argv[:1] == ["tables"]:
            from .doctables import main as tables_main
            return tables_main(argv[1:])
        return main_one(argv)
    except LabError as e:
        print(f"wakebench-lab: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("wakebench-lab: interrupted (SIGINT)", file=sys.stderr)
        return 130
