"""The guest's initramfs: static busybox, the wakebench binary and the libraries it loads, the
suite, /init (guest-init.sh) and the job it sources."""
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from . import HERE, LabError
from .qemu import banner, emulated

def shared_libraries(binary):
    """Paths of the shared libraries `binary` loads, from ldd (the dynamic loader included)."""
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True)
    if out.returncode != 0:
        raise LabError(f"ldd {binary}: {out.stderr.strip() or out.stdout.strip()}")
    libs = []
    for line in out.stdout.splitlines():
        m = re.search(r"=>\s*(/\S+)", line) or re.match(r"\s*(/\S+)", line)
        if m:
            libs.append(m.group(1))
        elif "not found" in line:
            raise LabError(f"ldd {binary}: {line.strip()}")
    return libs


def static_busybox():
    bb = shutil.which("busybox") or "/bin/busybox"
    if not Path(bb).is_file():
        raise LabError("busybox not found: apt-get install busybox-static")
    out = subprocess.run(["ldd", bb], capture_output=True, text=True)
    if out.returncode == 0 and "=>" in out.stdout:
        raise LabError(f"{bb} is dynamically linked: apt-get install busybox-static")
    return Path(bb)


def copy_into(root, src, dest=None):
    dest = root / (dest or str(src).lstrip("/"))
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(os.path.realpath(src), dest)
    return dest


def build_initramfs(stage, out, wakebench, config, job):
    root = stage / "root"
    for d in ("bin", "dev", "proc", "sys", "tmp", "lab", "usr/bin"):
        (root / d).mkdir(parents=True, exist_ok=True)
    copy_into(root, static_busybox(), "bin/busybox")
    wb = copy_into(root, wakebench, "usr/bin/wakebench")
    # Debug info would triple the initramfs, and the firmware loads it through fw_cfg at emulated
    # speed: every MiB costs boot time under TCG.
    if shutil.which("strip"):
        subprocess.run(["strip", "--strip-debug", str(wb)], check=True)
    for lib in shared_libraries(wakebench):
        copy_into(root, lib)
        # Debian's ldd prints /lib64/ld-linux-x86-64.so.2 for the loader, a symlink into
        # /lib/x86_64-linux-gnu: the copy keeps the path the binary's PT_INTERP names.
    if config:
        copy_into(root, config, "lab/config.json")
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


def guest_job(guest_cmd, run_args, run_timeout, name, sched_features=(), accel="tcg"):
    """/lab/job.sh, sourced by the guest's /init (its `step` helper ships what each step wrote):
    `wakebench topology --json`, the `sched_features` written to debugfs (e.g. NO_DELAY_DEQUEUE;
    the run's result set records the features it ran with), then `guest_cmd` if given, else
    `wakebench run` with `run_args` (None: no run). `accel` (tcg, kvm) picks the labels."""
    # The hostname lands in the result set's environment and in `run`'s summary title.
    # "-emulated" (TCG) or "-kvm" puts the label into `run`'s own progress header and title.
    suffix = "emulated" if emulated(accel) else "kvm"
    lines = [f"hostname wakebench-lab-{name}-{suffix}",
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


