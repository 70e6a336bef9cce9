"""Sched domains three ways: the ones a preset states its guest must build, the ones the guest
kernel built (guest-init.sh's dump: names from debugfs, spans from /proc/schedstat; flags from the
result set's environment.sched_domains) and the ones `wakebench predict --results` built from the
result set (predict.json's `domains`). Every difference is one line; the lab fails on any."""
from . import LabError
from .cpulist import format_cpu_list, parse_cpu_list

# The flag of the level whose CPUs share the LLC: SD_SHARE_LLC since 6.10, SD_SHARE_PKG_RESOURCES
# before (include/linux/sched/sd_flags.h), as common/system/sched_domains.cpp reads them.
LLC_FLAGS = ("SD_SHARE_LLC", "SD_SHARE_PKG_RESOURCES")
LLC_FLAGS_TEXT = " or ".join(LLC_FLAGS)

# What a preset's ("NAME", scope) spans, as keys of qemu.expected_topology's CPU records.
SCOPES = {"small-core": "small_core", "core": "siblings", "cluster": "cluster",
          "module": "cluster", "socket": None, "node": None, "all": None}


def expected_domains(topo, spec):
    """{cpu: [(name, span)]} for a preset's domain statement [(name, scope)], bottom-up;
    scope is small-core (a POWER SMT8 big core's small core: qemu.POWERVM_SMT8_GROUPS, the
    interleaved halves), core, cluster (arm64) or module (x86: its cluster), socket, node or
    all."""
    cpus = topo["cpus"]
    out = {}
    for c, info in cpus.items():
        levels = []
        for name, scope in spec:
            if scope == "all":
                span = set(cpus)
            elif scope in ("socket", "node"):
                span = {j for j, o in cpus.items() if o[scope] == info[scope]}
            elif info.get(SCOPES[scope]) is None:
                raise LabError(f"domain scope {scope}: cpu{c} has none (small cores are an SMT8 "
                               "core's)")
            else:
                span = set(info[SCOPES[scope]])
            levels.append((name, span))
        out[c] = levels
    return out


def judge_domains(topo, statement, departures, got):
    """(failures, departures): the guest's levels `got` ({cpu: [(name, span)]}) against the
    machine's `statement` [(name, scope)]. When they differ and the preset states its departures
    ({"domains": [(name, scope)], "cause": why the guest cannot build the machine's}), the guest is
    held to those instead, as strictly: if it builds exactly them, the differences from the
    machine come back as departures (the preset's cause says why); else every difference fails."""
    bad = level_mismatches(expected_domains(topo, statement), got, "the machine's")
    if not bad or not departures:
        return bad, []
    instead = level_mismatches(expected_domains(topo, departures["domains"]), got,
                               "the stated departure's")
    if instead:
        return bad + instead, []
    return [], bad


def guest_levels(sysfs):
    """{cpu: [(name, span)]} from the parsed sysfs dump, bottom-up."""
    return {c: [(d["name"], d["span"]) for d in sorted(ds, key=lambda d: d["level"])]
            for c, ds in sysfs["domains"].items()}


def text(levels):
    return " ".join(f"{n}={format_cpu_list(s)}" for n, s in levels) or "none"


def level_mismatches(want, got, what):
    """One line per CPU whose levels differ: `what` says whose levels `want` are."""
    bad = []
    for c in sorted(set(want) | set(got)):
        w, g = want.get(c, []), got.get(c, [])
        if [(n, set(s)) for n, s in w] != [(n, set(s)) for n, s in g]:
            bad.append(f"cpu{c} sched domains: {what} {text(w)}, guest {text(g)}")
    return bad


def model_levels(predict):
    """{cpu: [(name, span)]} and {cpu: name of the highest SD_SHARE_LLC level} from predict.json's
    `domains` (typed: predictions.Domain; the model names a NUMA level with its distance,
    "NUMA(20)"; debugfs says "NUMA")."""
    levels, llc = {}, {}
    for d in sorted(predict.domains or (), key=lambda d: (d.cpu, d.level)):
        levels.setdefault(d.cpu, []).append((d.name.split("(")[0], parse_cpu_list(d.span)))
        if d.share_llc:
            llc[d.cpu] = d.name
    return levels, llc


def recorded_llc(results):
    """{cpu: name of the highest level whose flags hold an LLC_FLAGS flag, or None} for every CPU
    the result set's environment.sched_domains records."""
    llc = {}
    doms = results.environment.get("sched_domains")  # environment: open JSON
    for d in sorted(doms if isinstance(doms, list) else [], key=lambda d: d.get("domain", 0)):
        llc.setdefault(d["cpu"], None)
        if any(f in LLC_FLAGS for f in d.get("flags", [])):
            llc[d["cpu"]] = d.get("name")
    return llc


def model_mismatches(sysfs, predict, results):
    """Every difference between the domains the guest kernel built and the predictor's reading of
    its result set: levels and spans per CPU, and the level that shares the LLC."""
    if not predict.domains:
        return ["predict.json has no domains (a wakebench before the model printed them)"]
    levels, llc = model_levels(predict)
    bad = level_mismatches(levels, guest_levels(sysfs), "the model's")
    kernel_llc = recorded_llc(results)
    if not kernel_llc:
        bad.append("the result set records no sched domains: the LLC level is not checked")
    for c in sorted(kernel_llc):
        if llc.get(c) != kernel_llc[c]:
            bad.append(f"cpu{c} LLC level (highest {LLC_FLAGS_TEXT}): the model's "
                       f"{llc.get(c) or 'none'}, guest {kernel_llc[c] or 'none'}")
    return bad
