"""Which qemu runs a guest: the host's (Debian 12's is 7.2) or the qemu 10 that fetch-qemu.sh
unpacked into the lab cache, chosen per preset (a preset's "qemu" is the lowest version it runs
on) and recorded with every result; the firmware directories a cached qemu needs (-L)."""
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from . import LabError
from .kernel import cache_dir

FETCH = "runners/lab/fetch-qemu.sh"


@dataclass(frozen=True)
class Qemu:
    path: str
    version: tuple  # (major, minor, micro)
    banner: str  # qemu's own first line of --version
    data_dirs: tuple = ()  # -L directories, searched in order


def parse_version(text):
    """'QEMU emulator version 10.0.2 (Debian ...)' -> (10, 0, 2); None if it is not qemu's."""
    m = re.search(r"QEMU emulator version (\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(g or 0) for g in m.groups()) if m else None


def version_text(version):
    return ".".join(str(v) for v in version)


@lru_cache(maxsize=None)
def probe(path):
    """(version, banner) of the qemu at `path`; LabError in one line if it does not run."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except OSError as e:
        raise LabError(f"{path}: cannot run ({e.strerror})") from None
    first = (out.stdout.splitlines() or [""])[0].strip()
    version = parse_version(first)
    if out.returncode != 0 or version is None:
        raise LabError(f"{path} --version: not a qemu ({first or out.stderr.strip()[:80]})")
    return version, first


def cached_roots(cache=None):
    """fetch-qemu.sh's roots in the lab cache, newest version first."""
    base = Path(cache or cache_dir()) / "qemu"
    roots = [p for p in base.glob("*") if (p / "version").is_file()]
    return sorted(roots, key=lambda p: parse_version((p / "version").read_text()) or (0,),
                  reverse=True)


def host_qemu(name):
    """$WB_LAB_QEMU (a path or a name on PATH), else `name` on PATH; None if neither is found."""
    want = os.environ.get("WB_LAB_QEMU") or name
    return shutil.which(want)


def choose(name, arch_data=(), needs=None, package="qemu", cache=None):
    """The qemu that runs a guest: the host's when it is at least `needs` (a version tuple, None:
    any), else the newest cached one that is; LabError in one line saying which version the
    preset needs and how to get it. `arch_data`: extra -L directories of the host's firmware
    packages (seabios for x86) that a cached qemu does not carry."""
    host, host_version = host_qemu(name), None
    if host:
        host_version, banner = probe(host)
        if needs is None or host_version >= needs:
            return Qemu(host, host_version, banner)
    wanted = os.environ.get("WB_LAB_QEMU")
    if wanted:
        if not host:
            raise LabError(f"WB_LAB_QEMU={wanted}: not found")
        raise LabError(f"WB_LAB_QEMU={wanted} is qemu {version_text(host_version)}; this preset "
                       f"needs {version_text(needs)}")
    for root in cached_roots(cache) if needs else ():
        path = root / "usr" / "bin" / name
        if path.is_file():
            version, banner = probe(str(path))
            if version >= needs:
                dirs = (str(root / "usr" / "share" / "qemu"), *arch_data)
                return Qemu(str(path), version, banner, dirs)
    if needs is None:
        raise LabError(f"{name} not installed (apt-get install {package})")
    have = f"the host has {version_text(host_version)}" if host else f"no {name} on the host"
    raise LabError(f"this preset needs qemu >= {version_text(needs)} and {have}: {FETCH} "
                   "puts Debian's bookworm-backports qemu 10 into the lab cache")


def command_prefix(qemu):
    """The binary and its -L arguments."""
    return [qemu.path, *(a for d in qemu.data_dirs for a in ("-L", d))]
