"""The topology a guest is asked for: a preset's, or free-form qemu -smp / -numa overrides (a
free-form topology is an x86_64 one). Used by one guest (cli.py) and by the matrix (matrix.py)."""
from . import LabError
from .qemu import PRESETS, expected_topology, preset_arch, shim_caches, shim_cmdline


def topology_args(preset, smp=None, numa=None, cpu=None, shim=True):
    """The GuestPlan keywords of a topology (name, smp, numa, cpu_model, arch, caches, domains,
    departures, machine, numbering, qemu_needs, shim) from a preset and free-form overrides (a
    free-form topology is an x86_64 one). A preset's "shim" gives the guest's command line its
    wblab_shim= (qemu.shim_cmdline) and the caches it shows; shim=False boots qemu's own
    firmware instead (its domains then fail the preset's statement)."""
    p = PRESETS.get(preset, {}) if preset else {}
    smp = smp or p.get("smp")
    if not smp:
        raise LabError("give --preset NAME or --smp ARGS")
    if not shim and "shim" not in p:
        raise LabError(f"--no-shim: preset {preset} has no shim")
    numa = numa if numa is not None else p.get("numa", [])
    same = preset and smp == p.get("smp") and numa == p.get("numa", [])
    arch = preset_arch(preset) if same else "x86_64"
    caches = p.get("caches") if same else None
    shimmed = same and shim and "shim" in p
    if shimmed:
        caches = shim_caches(p["shim"])
    numbering = p.get("numbering", "contiguous") if same else "contiguous"
    # LabError in one line now, not after the guest
    expected_topology(smp, numa, arch, caches, numbering)
    return {"name": preset if same else "custom", "smp": smp, "numa": numa, "arch": arch,
            "cpu_model": cpu or p.get("cpu", "Skylake-Server"), "caches": caches,
            "domains": p.get("domains") if same else None,
            "departures": p.get("departures") if same else None,
            "machine": p.get("machine") if preset else None,
            "numbering": p.get("numbering", "contiguous") if same else "contiguous",
            "qemu_needs": p.get("qemu") if preset else None,
            "shim": shim_cmdline(p["shim"]) if shimmed else None}
