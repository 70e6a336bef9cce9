"""registry/registry.json (registry/README.md): the policies, mechanisms and guest architectures,
listed once for the
C++ (which compiles the file in) and for these tools, which read the file itself: building a guest
kernel needs no built wakebench."""
import json
import platform

from . import REPO

FILE = REPO / "registry" / "registry.json"
REGISTRY = json.loads(FILE.read_text())
# Policies with a kernel of their own -> their patch in runners/lab/patches (None: unpatched).
KERNELS = {p["id"]: p["patch"] for p in REGISTRY["policies"] if "kernel" not in p}
# Policies run by another one's kernel -> that policy.
ALIASES = {p["id"]: p["kernel"] for p in REGISTRY["policies"] if "kernel" in p}
# Patched policies -> the sched feature that turns each on in the gated kernel (all off: mainline).
FEATURES = {p["id"]: p["sched_feature"] for p in REGISTRY["policies"] if "sched_feature" in p}
# Mechanisms whose tasks never block -> why ("busy-poll").
NO_KERNEL_WAKEUP = {m["id"]: m["no_kernel_wakeup"] for m in REGISTRY["mechanisms"]
                    if "no_kernel_wakeup" in m}
# The others, in the registry's order.
BLOCKING_MECHANISMS = tuple(m["id"] for m in REGISTRY["mechanisms"]
                            if m["id"] not in NO_KERNEL_WAKEUP)
# The guest architectures, by id: uname, kernel_arch, triplet, deb, elf_machine, kernel_target,
# kernel_image.
ARCHITECTURES = {a["id"]: a for a in REGISTRY["architectures"]}


def host_arch():
    """This machine's architecture id (None for one the lab has no entry for)."""
    return next((a for a, r in ARCHITECTURES.items() if r["uname"] == platform.machine()), None)
