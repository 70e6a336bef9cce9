"""Running qemu, bounded (a timeout, a soft-lockup watchdog, no qemu outliving the runner), its
console relayed line by line, and the transfer port's protocol (guest-init.sh: WBLAB-HELLO, files
as checksummed base64 between WBLAB-BEGIN and WBLAB-END, WBLAB-EXIT, WBLAB-DONE). The command line
it runs comes from qemu.py."""
import base64
import ctypes
import gzip
import hashlib
import re
import signal
import subprocess
import sys
import time
import zlib

from . import LabError, log


def set_pdeathsig():
    # prctl(PR_SET_PDEATHSIG, SIGKILL): qemu dies with the runner even if the runner is killed by
    # SIGKILL and no handler can run.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)


def scan_transfer(path):
    """Parse the transfer port's log: files (verified), step exit codes, markers seen."""
    files, exits, errors = {}, {}, []
    hello = done = False
    cur = None
    try:
        text = path.read_bytes().decode("ascii", "replace")
    except FileNotFoundError:
        text = ""
    for raw in text.splitlines():
        line = raw.strip("\r\n\x00 ")
        if cur is not None:
            if line == f"WBLAB-END {cur['name']}":
                data = base64.b64decode("".join(cur["chunks"]))
                if cur["gzip"]:
                    try:
                        data = gzip.decompress(data)
                    except (OSError, EOFError, zlib.error):
                        data = b""
                if len(data) != cur["size"] or hashlib.sha256(data).hexdigest() != cur["sha"]:
                    errors.append(f"{cur['name']}: transfer corrupted ({len(data)} of "
                                  f"{cur['size']} bytes, checksum mismatch)")
                else:
                    files[cur["name"]] = data
                cur = None
            elif line.startswith("WBLAB-"):
                errors.append(f"{cur['name']}: transfer interrupted by '{line}'")
                cur = None
            else:
                cur["chunks"].append(line)
            if cur is not None:
                continue
        m = re.match(r"WBLAB-BEGIN (\S+) (\d+) ([0-9a-f]{64})( gzip)?$", line)
        if m:
            cur = {"name": m.group(1), "size": int(m.group(2)), "sha": m.group(3),
                   "gzip": bool(m.group(4)), "chunks": []}
        elif line.startswith("WBLAB-HELLO"):
            hello = True
        elif line.startswith("WBLAB-EXIT "):
            _, step, rc = line.split()
            exits[step] = int(rc)
        elif line == "WBLAB-DONE":
            done = True
    if cur is not None:
        errors.append(f"{cur['name']}: transfer cut off (guest stopped mid-file)")
    return {"files": files, "exits": exits, "hello": hello, "done": done, "errors": errors}


def console_lines(console, offset):
    """(the complete lines the console file gained past byte `offset`, the offset after them)."""
    try:
        data = console.read_bytes()
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b"\n", offset) + 1
    if end <= offset:
        return [], offset
    return [x.rstrip("\r") for x in data[offset:end].decode("utf-8", "replace").splitlines()], end


def relay_console(console, offset, relay):
    """Each complete console line past `offset` to `relay`; returns the offset after them."""
    lines, offset = console_lines(console, offset)
    for line in lines:
        relay(line)
    return offset


def run_qemu(cmd, xfer, console, timeout, verbose, relay=None):
    """Runs qemu until it powers off, `timeout` s pass or the guest kernel reports a CPU stuck for
    LOCKUP_S (a hung guest never recovers: waiting out the budget would only waste the host);
    returns (boot_s, total_s, why it was stopped or None). Without `verbose`, each complete line
    of the console goes to `relay(line)` when given (the progress shows the guest's `run` case
    lines from it). No qemu process outlives this function: it is killed in `finally`, on
    SIGTERM/SIGINT (the handlers raise), and by PDEATHSIG if this process dies outright."""
    start = time.monotonic()
    boot_s = None
    with open(console.with_suffix(".qemu-stderr"), "wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                preexec_fn=set_pdeathsig)
    shown = relayed = 0
    try:
        while True:
            try:
                proc.wait(timeout=0.25)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic() - start
            if boot_s is None and xfer.exists() and b"WBLAB-HELLO" in xfer.read_bytes()[:4096]:
                boot_s = now
                log(f"guest booted in {boot_s:.1f} s")
            if verbose and console.exists():
                data = console.read_bytes()
                sys.stderr.write(data[shown:].decode("utf-8", "replace"))
                shown = len(data)
            elif relay:
                relayed = relay_console(console, relayed, relay)
            stuck = lockup(console)
            if now > timeout or stuck:
                why = stuck or f"timed out after {timeout} s"
                log(f"guest {why}: killing qemu (pid {proc.pid})")
                return boot_s, now, why
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if relay and not verbose:
        relay_console(console, relayed, relay)  # what came after the last look
    if proc.returncode != 0:
        msg = console.with_suffix(".qemu-stderr").read_text(errors="replace")
        msg = [l for l in msg.splitlines() if "TCG doesn't support" not in l]
        raise LabError(f"qemu exited {proc.returncode}: {' '.join(msg[-3:]) or 'no message'}")
    return boot_s, time.monotonic() - start, None


# The soft-lockup watchdog repeats "stuck for Ns" while a guest CPU spins with preemption off; past
# this the guest is hung (seen with -accel tcg,thread=multi on an overloaded host, see the README).
LOCKUP_S = 120


def lockup(console):
    try:
        text = console.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    worst = None
    for m in re.finditer(r"soft lockup - (CPU#\d+) stuck for (\d+)s! \[([^\]]*)\]", text):
        if int(m.group(2)) >= LOCKUP_S:
            worst = f"kernel hung: soft lockup, {m.group(1)} stuck for {m.group(2)} s in " \
                    f"{m.group(3)} (see console.log)"
    return worst
