"""One guest from start to end: initramfs, qemu, what came back, the checks and the agreement with
the model of the policy the guest's kernel runs. `run_guest` is what `wakebench-lab` and the matrix
call; the pure helpers below it have tests."""
import datetime
import json
import shlex
import shutil
import tempfile
from pathlib import Path

from . import RESULTS, LabError, log, predictions, qemubin, resultset, write_atomic
from .agreement import agreement, run_json
from .cpulist import format_cpu_list
from .devicetree import guest_dtb
from .domains import guest_levels, judge_domains, model_mismatches
from .initramfs import build_initramfs, guest_job
from .kernel import cache_dir
from .qemu import ARCHES, accel_args, add_memory_backends, banner, emulated, expected_topology, \
    xfer_args
from .qemurun import run_qemu, scan_transfer
from .sysfs import check_sysfs, parse_sysfs


class GuestPlan:
    """What one guest runs: the topology (a preset or free-form -smp/-numa), the kernel and the
    policy it is held to, the suite and where the results go; `relay(line)` takes the console's
    lines while it runs (progress.Relay.line, progress.Progress.line: the guest's `run` case
    lines)."""

    def __init__(self, name, smp, numa, cpu_model, kernel, policy, lab_kernel, wakebench, config,
                 out, mem=512, tcg_thread="single", append="", timeout=2400, guest_cmd=None,
                 no_run=False, run_args=(), predict=True, verbose=False, sched_features=(),
                 accel="tcg", arch="x86_64", caches=None, domains=None, guest_wakebench=None,
                 check_domains=True, departures=None, qemu_needs=None, machine=None,
                 numbering="contiguous", icount=None, relay=None, shim=None):
        self.__dict__.update(locals())
        del self.__dict__["self"]
        # The binary the guest runs; `wakebench` (the host's) classifies and predicts.
        self.guest_wakebench = guest_wakebench or wakebench

    def topology(self):
        return expected_topology(self.smp, self.numa, self.arch, self.caches, self.numbering)

    def choose_qemu(self):
        """The qemu that runs this guest (qemubin.choose), LabError in one line if none can."""
        arch = ARCHES[self.arch]
        seabios = ("/usr/share/seabios",) if self.arch == "x86_64" else ()
        return qemubin.choose(arch["qemu"], seabios, self.qemu_needs, arch["package"])


MIN_MEM_MIB = 256  # the least RAM a guest boots and runs wakebench in


def check_mem(mib):
    """LabError in one line, before anything runs, unless a guest can have `mib` MiB of RAM."""
    if mib < MIN_MEM_MIB:
        raise LabError(f"--mem: {mib} MiB is less than a guest needs ({MIN_MEM_MIB})")


def default_out(name, policy):
    return RESULTS / "lab" / f"{name}-{policy}-{datetime.datetime.now():%Y%m%d-%H%M%S}"


def qemu_command(plan, qemu, initrd, console, xfer, dtb=None):
    """`qemu` (a qemubin.Qemu) booting `plan`'s guest."""
    arch = ARCHES[plan.arch]
    # pseries takes RAM, and each NUMA node's share of it, in 256 MiB blocks (spapr: "Memory size
    # ... is not aligned to 256 MiB", "Node 0 memory size ... is not aligned to 256 MiB").
    nodes = max(1, sum(a.split(",", 1)[0] == "node" for a in plan.numa))
    block = 256 * nodes if plan.arch == "ppc64le" else 1
    mem = -(-plan.mem // block) * block
    objects, numa_full = add_memory_backends(plan.numa, mem)
    tcg_thread = plan.tcg_thread if plan.accel == "tcg" else None
    cmd = [*qemubin.command_prefix(qemu), *(plan.machine or arch["machine"]),
           *accel_args(plan.accel, tcg_thread),
           "-cpu", plan.cpu_model, "-m", f"{mem}M", "-smp", plan.smp]
    if plan.icount is not None:
        cmd += ["-icount", f"shift={plan.icount}"]
    for o in objects:
        cmd += ["-object", o]
    for n in numa_full:
        cmd += ["-numa", n]
    # The preset's shim (qemu.shim_cmdline) before --append: the lab kernel reads it in
    # prom_init, before anything the guest's own job does.
    extra = " ".join(a for a in (plan.shim, plan.append) if a)
    append = f"console={arch['console']} panic=-1 quiet sched_verbose {extra}".strip()
    cmd += ["-kernel", str(plan.kernel), "-initrd", str(initrd), "-append", append,
            "-nodefaults", "-display", "none", "-monitor", "none", "-no-reboot",
            "-serial", f"file:{console}", *xfer_args(plan.arch, xfer)]
    return cmd + (["-dtb", str(dtb)] if dtb else [])


def dump_command(cmd, path):
    """`cmd` (an arm64 virt guest's) writing its device tree to `path` instead of booting."""
    i = cmd.index("-M") + 1
    return cmd[:i] + [f"{cmd[i]},dumpdtb={path}"] + cmd[i + 1:]


def cache_groups(topo):
    """{level: [qemu CPU indexes of one cache instance, ...]} from expected_topology's caches
    (the device tree names CPUs by qemu's index, whatever number the guest gives them)."""
    groups = {}
    for info in topo["cpus"].values():
        for level, cpus in info.get("caches", {}).items():
            members = sorted(topo["cpus"][c]["index"] for c in cpus)
            if members not in groups.setdefault(level, []):
                groups[level].append(members)
    return groups


def device_tree_order(topo):
    """qemu CPU indexes in the guest's numbering order (the order of the device tree's cpu
    nodes)."""
    return [topo["cpus"][n]["index"] for n in sorted(topo["cpus"])]


NOTES = {
    "tcg": "timings are EMULATED (qemu TCG, vCPUs multiplexed on the host's CPUs): only "
           "placements are the guest kernel's own; never compare these timings with a host "
           "result set",
    "kvm": "timings are a KVM guest's (vCPUs on the host's CPUs, hardware virtualization): not "
           "emulated, but a virtual machine's; the host may preempt a vCPU at any time",
}


def label_results(results, qemu_cmd, plan, qemu_version):
    """The result set as it leaves the lab: emulated everywhere it has timings under TCG (under
    KVM emulated false everywhere, so host-side `predict` leaves out the TCG-only alternatives),
    and the kernel's policy, source version and patch hash in environment.lab_kernel."""
    emu = emulated(plan.accel)
    env = results.setdefault("environment", {})
    env["emulated"] = emu
    env["emulation"] = {
        "accelerator": plan.accel,
        "qemu_command": " ".join(shlex.quote(str(c)) for c in qemu_cmd),
        "guest_kernel_image": str(plan.kernel),
        "preset": plan.name,
        "qemu_version": qemu_version,
        "note": NOTES[plan.accel],
    }
    env["lab_kernel"] = plan.lab_kernel
    ctx = results.get("context")
    if isinstance(ctx, dict):
        ctx["emulated"] = emu
    # The guest's own predictions carry its pinned medians (pinned_rtt_ns, predicted_rtt_ns).
    if isinstance(results.get("predictions"), dict):
        results["predictions"]["emulated"] = emu


def class_pairs(topology_json):
    """{(waker, wakee): class} for every pair `wakebench topology --json` lists."""
    out = {}
    for c in topology_json.get("classes", []):
        for pair in c.get("pairs", []) if c.get("available") else []:
            out.setdefault(tuple(pair), c["class"])
    return out


def pinned_checks(results, pairs):
    """Each pinned case's CPUs, classified by wakebench's own topology of the guest (`pairs` from
    class_pairs), against the class the case claims."""
    rows = []
    for case in results.cases:
        if case.kernel:
            continue
        row = {"name": case.name, "placement": case.placement, "status": case.status,
               "reason": case.reason}
        if case.ok and case.cpus:
            row["cpus"] = list(case.cpus)
            row["class"] = pairs.get(case.cpus, "not a listed pair")
            row["agrees"] = row["class"] == case.placement
        rows.append(row)
    return rows


def guest_classes(wakebench, results, out):
    """`wakebench topology --json --topology <the guest's hwloc XML>` run on the host: the classes
    the guest has and every pair of each (the result set embeds the XML, written to
    topology.xml)."""
    xml = out / "topology.xml"
    if results.topology_xml is None:
        raise LabError(f"{results.where}: the result set holds no topology.xml")
    write_atomic(xml, results.topology_xml)
    n = max(1, (results.topology_pus or 64) ** 2)
    topo, msg = run_json([wakebench, "topology", "--json", "--topology", xml,
                          "--pairs-per-class", n])
    if topo is None:
        raise LabError(f"wakebench topology --topology {xml}: {msg}")
    return topo


def check_guest_sysfs(plan, got, summary, problems):
    """The guest's sysfs dump against the requested topology and the preset's domains; returns
    the parsed dump (None when none came back)."""
    if "sysfs.txt" not in got["files"]:
        problems.append("no sysfs dump came back")
        return None
    sysfs = parse_sysfs(got["files"]["sysfs.txt"].decode())
    mism = check_sysfs(plan.topology(), sysfs)
    departed = []
    if plan.domains:
        bad, departed = judge_domains(plan.topology(), plan.domains, plan.departures,
                                      guest_levels(sysfs))
        mism += bad
    summary["sysfs_check"] = {"ok": not mism, "mismatches": mism, "departures": departed,
                              "departure_cause": (plan.departures or {}).get("cause"),
                              "guest_kernel": sysfs["meta"].get("kernel")}
    print(f"sysfs check ({plan.name}, guest kernel {sysfs['meta'].get('kernel')}): "
          + ("matches the requested topology" if not mism else f"{len(mism)} mismatch(es)")
          + (f"; its sched domains depart from the machine's on {len(departed)} CPUs, as the "
             "preset states" if departed else ""))
    for m in mism:
        print(f"  MISMATCH {m}")
    if departed:
        print(f"  DEPARTS {departed[0]}" + (f" (and {len(departed) - 1} CPUs more)"
                                            if len(departed) > 1 else ""))
        print(f"  because {plan.departures['cause']}")
    print("  cpu0 sched domains: " + ", ".join(
        f"{d['name']}={format_cpu_list(d['span'])}" for d in sysfs["domains"].get(0, [])))
    if mism:
        problems.append(f"sysfs differs from the requested topology ({len(mism)} mismatches)")
    return sysfs


def check_model_domains(wakebench, sysfs, results_path, summary, problems, predict=None):
    """The guest kernel's domains against the predictor's reading of its result set (`predict`:
    that reading when the agreement already ran it, else `wakebench predict` runs now)."""
    msg = None
    if predict is None:
        predict, msg = run_json([wakebench, "predict", "--results", results_path, "--json"])
    if predict is None:
        problems.append(f"domains not checked against the model: wakebench predict: {msg}")
        return
    predict = predictions.read(predict, f"wakebench predict --results {results_path} --json")
    mism = model_mismatches(sysfs, predict, resultset.load(results_path))
    summary["model_domains_check"] = {"ok": not mism, "mismatches": mism}
    print("sched domains vs the model's reading: "
          + ("equal" if not mism else f"{len(mism)} difference(s)"))
    for m in mism:
        print(f"  DIFFERS {m}")
    if mism:
        problems.append(f"the guest's sched domains differ from the model's ({len(mism)})")


def print_cases(results, rows, accel="tcg"):
    print(f"\n=== {banner(accel)} ===")
    what = "EMULATED" if emulated(accel) else "KVM guest"
    print(f"{'case':<34} {'status':<8} {'cpus':<7} {'class':<12} median RTT ns ({what})")
    by_name = {r["name"]: r for r in rows}
    for case in results.cases:
        r = by_name.get(case.name, {})
        cp = ",".join(map(str, case.cpus)) if case.cpus else "-"
        med = case.rtt_median_ns
        note = r.get("class", "") + (" (!)" if r.get("agrees") is False else "")
        print(f"{case.name:<34} {case.status:<8} {cp:<7} {note:<12} "
              f"{'' if med is None else f'{med:.0f}'} {case.reason or ''}")


def prepare_guest(plan, qemu, out):
    """The qemu command and the files it boots (initramfs, and for arm64 the device tree);
    returns (command, initramfs, transfer log, console log)."""
    initrd = out / "initramfs.cpio.gz"
    xfer, console = out / "transfer.log", out / "console.log"
    for p in (xfer, console):
        p.unlink(missing_ok=True)
    dtb = out / "guest.dtb" if plan.caches and plan.arch == "arm64" else None
    cmd = qemu_command(plan, qemu, initrd, console, xfer, dtb)
    # The guest's own deadline for `wakebench run` leaves time to ship the result set back.
    run_timeout = max(30, plan.timeout - 90)
    job = guest_job(plan.guest_cmd, None if plan.no_run else plan.run_args, run_timeout, plan.name,
                    plan.sched_features, plan.accel)
    with tempfile.TemporaryDirectory(prefix="wakebench-lab-") as stage:
        build_initramfs(Path(stage), initrd, plan.guest_wakebench, plan.config, job, plan.arch,
                        cache_dir())
    if dtb:  # qemu dumps its tree once it has loaded the kernel and the initramfs
        guest_dtb(dump_command(cmd[:-2], out / "qemu.dtb"), out / "qemu.dtb",
                  cache_groups(plan.topology()), dtb, device_tree_order(plan.topology()))
    log(f"{plan.name}: -cpu {plan.cpu_model} -smp {plan.smp} "
        + " ".join("-numa " + n for n in plan.numa))
    log(f"kernel {plan.kernel} (policy {plan.policy}); initramfs "
        f"{initrd.stat().st_size // 1024} KiB; output {out}")
    log(banner(plan.accel))
    return cmd, initrd, xfer, console


def transfer_problems(got, stopped):
    """What went wrong between boot and the last step, from the transfer port's record."""
    problems = list(got["errors"])
    if not got["hello"]:
        problems.append("the guest never reached its /init (see console.log)")
    if not got["done"]:
        problems.append("the guest did not finish its job" +
                        (f" ({stopped})" if stopped else " (see console.log)"))
    for step, rc in got["exits"].items():
        if rc:
            problems.append(f"guest step '{step}' exited {rc} (see {step}.err / run.log)")
    if b"No space left on device" in got["files"].get("run.log", b""):
        problems.append("the guest's /tmp, half of its RAM, filled up: give it more "
                        "(--mem MiB)")
    return problems


def check_results(plan, qemu, results, cmd, out, summary, problems):
    """The guest's result set labelled and saved, its pinned cases' CPUs classified by
    wakebench's topology of the guest; returns its path."""
    label_results(results.doc, cmd, plan, qemu.banner)
    path = out / "results.json"
    write_atomic(path, json.dumps(results.doc, indent=1) + "\n")
    topo = guest_classes(plan.wakebench, results, out)
    summary["classes"] = [c["class"] for c in topo.get("classes", []) if c.get("available")]
    print("classes available in the guest (wakebench topology on its hwloc XML): "
          + ", ".join(summary["classes"]))
    rows = pinned_checks(results, class_pairs(topo))
    summary["pinned_check"] = rows
    print_cases(results, rows, plan.accel)
    for r in rows:
        if r.get("agrees") is False:
            problems.append(f"{r['name']}: ran on CPUs {r['cpus']}, which wakebench's "
                            f"topology of the guest classifies as {r['class']}")
    return path


def run_guest(plan):
    """Boots the guest, brings back what it wrote, checks it; writes lab-summary.json and returns
    (summary, problems)."""
    out = Path(plan.out)
    out.mkdir(parents=True, exist_ok=True)
    qemu = plan.choose_qemu()
    cmd, initrd, xfer, console = prepare_guest(plan, qemu, out)
    boot_s, total_s, stopped = run_qemu(cmd, xfer, console, plan.timeout, plan.verbose,
                                        plan.relay)
    initrd.unlink()
    got = scan_transfer(xfer)
    for n, data in got["files"].items():
        if n != "results.json":
            write_atomic(out / n, data)
    summary = {"name": plan.name, "emulated": emulated(plan.accel), "accel": plan.accel,
               "qemu_command": cmd, "qemu_version": qemu.banner,
               "kernel": str(plan.kernel), "lab_kernel": plan.lab_kernel, "policy": plan.policy,
               "boot_s": boot_s, "total_s": round(total_s, 1), "stopped": stopped,
               "guest_done": got["done"], "step_exit_codes": got["exits"],
               "transfer_errors": got["errors"]}
    problems = transfer_problems(got, stopped)
    sysfs = check_guest_sysfs(plan, got, summary, problems)
    results_path = None
    if "results.json" in got["files"]:
        results = resultset.parse(got["files"]["results.json"], "the guest's results.json")
        results_path = check_results(plan, qemu, results, cmd, out, summary, problems)
    elif not plan.no_run and not plan.guest_cmd and not any(
            n.startswith("results-ab") for n in got["files"]):  # --ab: one set per setting
        problems.append("no result set came back")
    if results_path and plan.predict:
        summary["agreement"] = agreement(plan.wakebench, results_path, out, plan.policy)
    # Any result set will do (the gated guest's come one per setting): the domains are the same.
    first = results_path or next(iter(sorted(out.glob("results-ab*.json"))), None)
    if sysfs and first and plan.check_domains:
        # agreement() saved its reading of results.json in predict.json when it ran and succeeded.
        fresh = "unavailable" not in summary.get("agreement", {"unavailable": True})
        reading = json.loads((out / "predict.json").read_text()) if fresh else None
        check_model_domains(plan.wakebench, sysfs, first, summary, problems, reading)
    summary["problems"] = problems
    write_atomic(out / "lab-summary.json", json.dumps(summary, indent=1, default=list) + "\n")
    log(f"boot {boot_s:.1f} s, whole guest {total_s:.1f} s" if boot_s else
        f"no boot after {total_s:.1f} s")
    for p in problems:
        log(f"PROBLEM: {p}")
    log(f"results in {out} ({banner(plan.accel)})")
    return summary, problems
