"""The guest's initramfs: static busybox, the wakebench binary and the libraries it loads, the
suite, /init (guest-init.sh), its settings (/lab/env) and the job it sources. The guest's
architecture may differ from the host's: the libraries are found from the binary's ELF headers
(readelf, never by running it) in Debian's multiarch directories of that architecture, and a
foreign busybox comes from Debian's busybox-static package of that architecture."""
import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from . import HERE, LabError
from .qemu import ARCHES, banner, emulated
from .registry import ARCHITECTURES, host_arch

def elf_arch(path):
    """The architecture (registry.json) an ELF file was built for, from e_machine (bytes 18-19,
    little-endian), or None."""
    with open(path, "rb") as f:
        head = f.read(20)
    if head[:4] != b"\x7fELF":
        return None
    machine = int.from_bytes(head[18:20], "little")
    return next((a for a, r in ARCHITECTURES.items() if r["elf_machine"] == machine), None)


def needed(binary):
    """(PT_INTERP or None, DT_NEEDED names) of an ELF file, from readelf."""
    out = subprocess.run(["readelf", "-ldW", str(binary)], capture_output=True, text=True)
    if out.returncode != 0:
        raise LabError(f"readelf {binary}: {out.stderr.strip()}")
    interp = re.search(r"\[Requesting program interpreter: (\S+)\]", out.stdout)
    return (interp.group(1) if interp else None,
            re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout))


def library_dirs(arch, binary=None):
    """Where `arch`'s libraries are: the multiarch directories, then the sysroot that
    runners/cross-build.sh extracts beside `binary` (build-cross-<arch>/sysroot: the libraries
    it installs no multiarch package for, as for ppc64el)."""
    t = ARCHES[arch]["triplet"]
    dirs = [Path(d) for d in (f"/lib/{t}", f"/usr/lib/{t}", f"/usr/{t}/lib")]
    if binary:
        sysroot = Path(binary).resolve().parent / "sysroot"
        dirs += [sysroot / "lib" / t, sysroot / "usr" / "lib" / t]
    return dirs


def shared_libraries(binary, arch):
    """[(host path, guest path)] of the shared libraries `binary` loads, the dynamic loader first:
    each found in library_dirs (transitively) and put where the guest's loader searches, its
    multiarch directory; the loader at the path the binary's PT_INTERP names."""
    dirs = library_dirs(arch, binary)
    interp, names = needed(binary)
    libdir = f"/usr/lib/{ARCHES[arch]['triplet']}"
    libs = []
    if interp:
        found = Path(interp) if Path(interp).exists() else \
            next((d / Path(interp).name for d in dirs if (d / Path(interp).name).is_file()), None)
        if found is None:
            raise LabError(f"{binary}: its loader {interp} is not installed here (Debian's libc6 "
                           f"of {arch}, e.g. through runners/cross-build.sh)")
        libs.append((str(found), interp))
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        path = next((d / name for d in dirs if (d / name).is_file()), None)
        if path is None:
            raise LabError(f"{binary}: {name} ({arch}) not found in "
                           f"{', '.join(map(str, dirs))}")
        libs.append((str(path), f"{libdir}/{name}"))
        todo += needed(path)[1]
    return libs


def static_busybox(arch="x86_64", cache=None):
    """The host's busybox-static for a guest of the host's architecture; for another, the
    busybox of Debian's busybox-static package of that architecture, extracted once into `cache`
    (apt-get download needs that dpkg architecture: runners/cross-build.sh adds it)."""
    if host_arch() == arch:
        bb = shutil.which("busybox") or "/bin/busybox"
        if not Path(bb).is_file():
            raise LabError("busybox not found: apt-get install busybox-static")
        if needed(bb)[0]:
            raise LabError(f"{bb} is dynamically linked: apt-get install busybox-static")
        return Path(bb)
    deb = ARCHES[arch]["deb"]
    bb = Path(cache) / f"busybox-{deb}" / "bin/busybox"
    if not bb.is_file():
        where = bb.parents[1]
        where.mkdir(parents=True, exist_ok=True)
        got = subprocess.run(["apt-get", "download", f"busybox-static:{deb}"], cwd=where,
                             capture_output=True, text=True)
        debs = list(where.glob("busybox-static_*.deb"))
        if got.returncode or not debs:
            raise LabError(f"apt-get download busybox-static:{deb} failed (dpkg "
                           f"--add-architecture {deb} && apt-get update): "
                           f"{got.stderr.strip()[-200:]}")
        subprocess.run(["dpkg", "-x", str(debs[0]), str(where / "x")], check=True)
        bb.parent.mkdir(exist_ok=True)
        (where / "x/bin/busybox").rename(bb)
        shutil.rmtree(where / "x")
        debs[0].unlink()
    if elf_arch(bb) != arch:
        raise LabError(f"{bb} is not an {arch} binary")
    return bb


def copy_into(root, src, dest=None):
    dest = root / (dest or str(src).lstrip("/"))
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(os.path.realpath(src), dest)
    return dest


def build_initramfs(stage, out, wakebench, config, job, arch="x86_64", cache=None):
    root = stage / "root"
    for d in ("bin", "dev", "proc", "sys", "tmp", "lab", "usr/bin"):
        (root / d).mkdir(parents=True, exist_ok=True)
    copy_into(root, static_busybox(arch, cache), "bin/busybox")
    if elf_arch(wakebench) != arch:
        raise LabError(f"{wakebench} is not an {arch} binary (an {arch} guest runs the {arch} "
                       "build: runners/cross-build.sh, or --guest-wakebench)")
    wb = copy_into(root, wakebench, "usr/bin/wakebench")
    # Debug info would triple the initramfs, and the firmware loads it through fw_cfg at emulated
    # speed: every MiB costs boot time under TCG. Debian's strip reads the host's ELF machine only:
    # another architecture's binary needs its binutils-<triplet> (the cross compiler's).
    strip = "strip" if host_arch() == arch else f"{ARCHES[arch]['triplet']}-strip"
    if shutil.which(strip):
        subprocess.run([strip, "--strip-debug", str(wb)], check=True)
    for lib, dest in shared_libraries(wakebench, arch):
        copy_into(root, lib, dest.lstrip("/"))
    if config:
        copy_into(root, config, "lab/config.json")
    (root / "lab/env").write_text(f"WBLAB_XFER={ARCHES[arch]['xfer_dev']}\n")
    (root / "lab/job.sh").write_text(job)
    init = copy_into(root, HERE / "guest-init.sh", "init")
    init.chmod(0o755)
    with open(out, "wb") as f:
        find = subprocess.Popen(["find", ".", "-print0"], cwd=root, stdout=subprocess.PIPE)
        cpio = subprocess.Popen(["cpio", "--null", "-o", "-H", "newc", "-R", "0:0", "--quiet"],
                                cwd=root, stdin=find.stdout, stdout=subprocess.PIPE)
        gz = subprocess.Popen(["gzip", "-1"], stdin=cpio.stdout, stdout=f)
        find.stdout.close()
        cpio.stdout.close()
        if gz.wait() or cpio.wait() or find.wait():
            raise LabError("building the initramfs failed (find | cpio | gzip)")
    shutil.rmtree(root)


def guest_job(guest_cmd, run_args, run_timeout, name, sched_features=(), accel="tcg", now=None):
    """/lab/job.sh, sourced by the guest's /init (its `step` helper ships what each step wrote):
    the clock set to the host's `now` (default: this moment), `wakebench topology --json`, the
    `sched_features` written to debugfs (e.g. NO_DELAY_DEQUEUE; the run's result set records the
    features it ran with), then `guest_cmd` if given, else `wakebench run` with `run_args` (None:
    no run). `accel` (tcg, kvm) picks the labels."""
    # The hostname lands in the result set's environment and in `run`'s summary title.
    # "-emulated" (TCG) or "-kvm" puts the label into `run`'s own progress header and title.
    suffix = "emulated" if emulated(accel) else "kvm"
    # A guest without an RTC driver (the arm64 virt kernel) starts in 1970: the result set's
    # captured_at would then say nothing of when the guests ran (the matrix's cases record).
    lines = [f"date -s @{int(time.time() if now is None else now)} > /dev/null",
             f"hostname wakebench-lab-{name}-{suffix}",
             "step topology sh -c 'wakebench topology --json > /tmp/out/topology.json "
             "2> /tmp/out/topology.err'"]
    for f in sched_features:
        # The step fails (and the host reports it) when the kernel refuses the name.
        write = f"echo {f} > /sys/kernel/debug/sched/features"
        lines.append(f"step feature-{f} sh -c {shlex.quote(write)}")
    if guest_cmd:
        lines.append(f"step custom sh -c {shlex.quote(guest_cmd)}")
    elif run_args is not None:
        extra = " ".join(shlex.quote(a) for a in run_args)
        # busybox timeout bounds the run inside the guest so whatever it wrote is still shipped
        # before the host's deadline; the rc file survives the pipe through tee.
        # run.log (and the console, through tee) carry `run`'s progress lines and summary table:
        # the banner heads them so no guest timing is ever shown unlabelled.
        head = shlex.quote("guest: " + banner(accel))
        cmd = (f"{{ echo {head}; timeout {run_timeout} wakebench run --config /lab/config.json "
               f"--out /tmp/out/results.json {extra}; echo $? > /tmp/run.rc; }} 2>&1 "
               "| tee /tmp/out/run.log; exit $(cat /tmp/run.rc)")
        lines.append(f"step run sh -c {shlex.quote(cmd)}")
    return "\n".join(lines) + "\n"


