"""The guest's topology as qemu arguments: the presets, -smp/-numa parsing and the topology they
ask for, the architectures' machines and transfer ports, the accelerator (tcg or kvm). Running
qemu, and what comes back from it, is qemurun.py."""
import os

from . import BANNER, LabError
from .cpulist import parse_cpu_list
from .registry import ARCHITECTURES

# -cpu Skylake-Server: qemu 7.2 encodes SMT in CPUID leaf 0xB/0x1F and L3 sharing per die in leaf 4
# (target/i386/cpu.c, cpu_x86_cpuid case 4: L3 shared by 1 << apicid_die_offset), so the guest
# kernel sees thread siblings and one LLC per die. `-cpu EPYC` with the same -smp shows no SMT
# siblings to the guest (checked on Debian's qemu 7.2), so the presets use Skylake-Server.
# Why a qemu pseries guest cannot build a POWER LPAR's domains (runners/lab/power/README.md,
# DOMAINS.md): qemu 10's device tree (hw/ppc/spapr.c, spapr_dt_cpu) gives the cpu nodes no
# ibm,thread-groups and no l2-cache, so no big cores (SMT spans the SMT8 core, not its small
# core) and no CACHE level; qemu marks every pseries guest a shared-processor LPAR (the VPA's
# shared bit, hw/ppc/spapr_hcall.c register_vpa()), which has no MC level
# (has_coregroup_support()), and its FORM2 /rtas/ibm,max-associativity-domains has 2 cells, not
# more than primary_domain_index + 2 = 3 (ibm,associativity-reference-points <1>), so
# coregroup_enabled stays 0 anyway (arch/powerpc/mm/numa.c, find_possible_nodes()).
PSERIES_CAUSE = ("qemu's pseries tree has no ibm,thread-groups and no l2-cache: no small cores, "
                 "no CACHE")
PSERIES_MC_CAUSE = ("qemu's pseries tree has no ibm,thread-groups: no small cores; a "
                    "shared-processor LPAR (qemu's VPA) with 2 cells of "
                    "ibm,max-associativity-domains: no coregroup, no MC")

# PowerVM's ibm,thread-groups on an SMT8 core, as thread indexes within the core: property 1 (the
# small cores, sharing an L1) on POWER9, POWER10 and POWER11 LPARs, and on POWER10 property 2 (the
# L2 and L3) naming the same groups. Interleaved, not consecutive: the captures and smp.c's
# parse_thread_groups() in runners/lab/power/DOMAINS.md, section 1. The "small-core" scope of a
# domain statement is a thread's group here.
POWERVM_SMT8_GROUPS = ((0, 2, 4, 6), (1, 3, 5, 7))

# The shims the lab has, by name: a preset's "shim" names the one its guest needs (what the
# guest's firmware must supply and qemu's does not), and the lab boots no preset whose shim is
# missing (check_bootable). The POWER one (issue 51, item 2; runners/lab/power/DOMAINS.md,
# section 6) is runners/lab/patches/shim/powervm-lpar.patch, in every ppc64le lab kernel and
# off unless the guest's command line carries shim_cmdline()'s wblab_shim=.
POWERVM_SHIM = "powervm-devicetree"
SHIMS = frozenset({POWERVM_SHIM})
# The inputs of a preset's "shim" the lab's shim cannot supply, and why: a preset naming one
# boots only with "departures" that say what its guest builds instead (check_bootable).
# mm/numa.c cpu_to_coregroup_id() takes the last cell of the H_HOME_NODE_ASSOCIATIVITY answer as
# the coregroup, and qemu's (hw/ppc/spapr_numa.c h_home_node_associativity()) ends in the vcpu
# id, one per thread: a hypervisor answer, not a device-tree property. qemu's 2-cell
# ibm,max-associativity-domains also leaves coregroup_enabled 0 (find_possible_nodes()).
SHIM_CANNOT = {"coregroup": "qemu's VPHN answer ends in the vcpu id (no coregroup over several "
                            "cores) and its ibm,max-associativity-domains has 2 cells: no MC"}

PRESETS = {
    "smt2": {
        "doc": "1 socket, 2 cores x 2 threads, one LLC, one node",
        "cpu": "Skylake-Server",
        "smp": "4,sockets=1,cores=2,threads=2",
        "numa": [],
    },
    "smt2-2socket-numa": {
        "doc": "2 sockets x 2 cores x 2 threads, one LLC per socket, 2 NUMA nodes",
        "cpu": "Skylake-Server",
        "smp": "8,sockets=2,cores=2,threads=2",
        "numa": ["node,nodeid=0", "node,nodeid=1",
                 "cpu,node-id=0,socket-id=0", "cpu,node-id=1,socket-id=1"],
    },
    # Three cores in one LLC: a core can stay idle while the pair holds the other two (the
    # premise of sync-core, which smt2's two cores cannot give).
    "smt2-3core": {
        "doc": "1 socket, 3 cores x 2 threads, one LLC, one node",
        "cpu": "Skylake-Server",
        "smp": "6,sockets=1,cores=3,threads=2",
        "numa": [],
    },
    # Four cores without SMT in one LLC: sync-pair's premise (no SMT active), with idle cores
    # beside the pair; `wakebench search` finds no case telling sync-pair from mainline on 2llc
    # (its LLCs of two cores), and 12 here.
    "4core": {
        "doc": "1 socket, 4 cores (no SMT), one LLC, one node",
        "cpu": "Skylake-Server",
        "smp": "4,sockets=1,cores=4,threads=1",
        "numa": [],
    },
    # Two LLCs in one node: qemu's x86 L3 is per die, so two dies in one socket and no -numa.
    "2llc": {
        "doc": "1 socket, 2 dies x 2 cores (no SMT), one LLC per die, one node",
        "cpu": "Skylake-Server",
        "smp": "4,sockets=1,dies=2,cores=2,threads=1",
        "numa": [],
    },
    # arm64 (qemu's virt machine, a device tree): the caches are the lab's (devicetree.py), each
    # given as the CPUs one instance serves (core, cluster, socket); "domains" are the sched
    # domains, bottom-up after degeneration, the guest kernel must build (domains.py).
    # Kunpeng 920-like: clusters of 4 cores (a shared L2 here) inside one L3.
    "arm64-cls4": {
        "arch": "arm64",
        "doc": "arm64, 1 socket, 2 clusters x 4 cores (no SMT), L2 per cluster, one L3",
        "cpu": "max",
        "smp": "8,sockets=1,clusters=2,cores=4,threads=1",
        "numa": [],
        "caches": {2: "cluster", 3: "socket"},
        "domains": [("CLS", "cluster"), ("MC", "socket")],
    },
    # Ampere Altra-like: 2-core clusters, a private L2 per core and no shared L3 in the firmware's
    # tables. drivers/base/arch_topology.c: cpu_coregroup_mask() extends the per-core LLC to the
    # cluster ("no shared cpu-side LLC but with clusters"), and cpu_clustergroup_mask(), which may
    # not span as much as the coregroup, falls back to the core: CLS degenerates and MC, an
    # SD_SHARE_LLC level, spans the cluster.
    "arm64-altra": {
        "arch": "arm64",
        "doc": "arm64, 1 socket, 4 clusters x 2 cores (no SMT), private L2, no L3",
        "cpu": "max",
        "smp": "8,sockets=1,clusters=4,cores=2,threads=1",
        "numa": [],
        "caches": {2: "core"},
        "domains": [("MC", "cluster"), ("PKG", "socket")],
    },
    "arm64-smt2-cls": {
        "arch": "arm64",
        "doc": "arm64, 1 socket, 2 clusters x 2 cores x 2 threads, L2 per core, one L3",
        "cpu": "max",
        "smp": "8,sockets=1,clusters=2,cores=2,threads=2",
        "numa": [],
        "caches": {2: "core", 3: "socket"},
        "domains": [("SMT", "core"), ("CLS", "cluster"), ("MC", "socket")],
    },
    "arm64-2numa": {
        "arch": "arm64",
        "doc": "arm64, 2 sockets x 2 clusters x 2 cores, L2 per cluster, L3 per socket, 2 nodes",
        "cpu": "max",
        "smp": "8,sockets=2,clusters=2,cores=2,threads=1",
        "numa": ["node,nodeid=0", "node,nodeid=1",
                 "cpu,node-id=0,socket-id=0", "cpu,node-id=1,socket-id=1"],
        "caches": {2: "cluster", 3: "socket"},
        "domains": [("CLS", "cluster"), ("MC", "socket"), ("NUMA", "all")],
    },
    # Intel's E-core clusters: 4 cores sharing an L2 inside the LLC. x86 Linux builds CLS from the
    # L2's sharing in CPUID leaf 4 (cacheinfo's cpu_l2c_shared_mask), which qemu fills from its
    # cache topology, not from -smp's modules: -machine smp-cache (qemu >= 9.2) puts the L2 at the
    # module. Domains: CLS over the module, MC over the socket's L3. -cpu SierraForest, Intel's
    # E-core Xeon (4-core modules sharing an L2): Skylake-Server makes qemu 10.0.2 abort with -smp
    # modules= (its CPUID level is below 0x1F: encode_topo_cpuid1f, "Assertion `count <=
    # CPU_TOPOLOGY_LEVEL_SOCKET' failed", before the kernel prints a line), and max boots but
    # reports a private L2 per CPU in leaf 4 whatever smp-cache says.
    "x86-cls4": {
        "doc": "x86, 1 socket, 2 modules x 4 cores (no SMT), L2 per module, one L3, one node",
        "cpu": "SierraForest",
        "machine": ["-M", "pc,smp-cache.0.cache=l2,smp-cache.0.topology=module"],
        "qemu": (10, 0),
        "smp": "8,sockets=1,modules=2,cores=4,threads=1",
        "numa": [],
        "caches": {2: "module", 3: "socket"},
        "domains": [("CLS", "module"), ("MC", "socket")],
    },
    # arm64-smt2-cls numbered as x86 servers number SMT siblings (cpu N's sibling is N + 4): the
    # lab's device tree lists every core's first thread before any second thread, and Linux
    # numbers arm64 CPUs in device-tree order. The same machine, so the same domains by scope.
    "arm64-smt2-cls-strided": {
        "arch": "arm64",
        "doc": "arm64-smt2-cls with strided SMT numbering (siblings N and N + 4)",
        "cpu": "max",
        "smp": "8,sockets=1,clusters=2,cores=2,threads=2",
        "numa": [],
        "numbering": "strided",
        "caches": {2: "core", 3: "socket"},
        "domains": [("SMT", "core"), ("CLS", "cluster"), ("MC", "socket")],
    },
    # POWER (ppc64le) on qemu's pseries machine, a PowerVM LPAR's. SMT under TCG needs qemu 10
    # (runners/lab/fetch-qemu.sh; a preset's "qemu" is the lowest version it runs on). "domains"
    # are the real machine's, from the kernel's powerpc topology table (arch/powerpc/kernel/smp.c,
    # build_sched_topology(): SMT over a big core's small core when ibm,thread-groups names the
    # halves, CACHE over the threads that share an L2, MC over a coregroup, PKG over the node);
    # "departures" what the guest builds instead, and why: checked as strictly as "domains".
    "power10-smt8": {
        "arch": "ppc64le",
        "doc": "qemu pseries -cpu power10, 2 SMT8 cores, one node; not a POWER10 LPAR's domains: "
               "no small cores (SMT spans 8 threads), no MC, a shared-processor LPAR",
        "cpu": "power10",
        "qemu": (10, 0),
        "smp": "16,sockets=1,cores=2,threads=8",
        "numa": [],
        # A dedicated POWER10 LPAR's device tree gives each big core ibm,thread-groups of
        # property 1 (the two interleaved SMT4 halves: SMT over the small core,
        # smallcore_smt_mask) and of property 2 naming the same halves (the L2 and L3 per small
        # core: no level above SMT shares the LLC, no CACHE; 9538abee18cc and the captures in
        # runners/lab/power/DOMAINS.md); PowerVM's associativity gives dedicated LPARs
        # coregroups, so MC over the coregroup (mm/numa.c), here both cores; PKG spans the same
        # 16 CPUs with no flag MC lacks and degenerates (sd_parent_degenerate). An earlier
        # statement here had a CACHE level over the big core, which POWER10 does not build.
        "domains": [("SMT", "small-core"), ("MC", "all")],
        "departures": {"domains": [("SMT", "core"), ("PKG", "all")], "cause": PSERIES_MC_CAUSE},
    },
    # A POWER9 LPAR in SMT8 mode (tests/fixtures/sysroot-power9-lpar-smt8: SMT, CACHE, DIE and
    # NUMA on 5.9; DIE is PKG since 6.7), cut to one SMT8 big core per chip and two chips, each
    # its own node. SMT over the small core (ibm,thread-groups property 1) and CACHE over the
    # big core (an l2-cache node per big core); PKG spans the chip's node, as CACHE does here,
    # and degenerates; NUMA over both chips. No MC: the fixture's LPAR shows none
    # (runners/lab/power/DOMAINS.md).
    "power9-smt8-2numa": {
        "arch": "ppc64le",
        "doc": "qemu pseries -cpu power9, 2 chips x 1 SMT8 core, 2 nodes; not a POWER9 LPAR's "
               "domains: no small cores (SMT spans 8 threads), no CACHE level, a "
               "shared-processor LPAR",
        "cpu": "power9",
        "qemu": (10, 0),
        "smp": "16,sockets=2,cores=1,threads=8",
        # pseries' -numa cpu takes core-id only (the vCPU id of a core's thread 0): cpus= instead
        "numa": ["node,nodeid=0,cpus=0-7", "node,nodeid=1,cpus=8-15"],
        "domains": [("SMT", "small-core"), ("CACHE", "core"), ("NUMA", "all")],
        "departures": {"domains": [("SMT", "core"), ("NUMA", "all")], "cause": PSERIES_CAUSE},
    },
    # Issue 51: PowerVM LPARs' domains as sourced in runners/lab/power/DOMAINS.md (section 3),
    # stated before any guest boots. Their "shim" says what the guest's firmware must supply
    # that qemu's pseries does not (DOMAINS.md, section 6): ibm,thread-groups by property
    # (groups of thread indexes), an l2-cache node per big core or none, the shared-processor
    # bit, a coregroup over all cores or none, and the kernel's CONFIG_NR_CPUS (kernel.config
    # has 16, kernel-ppc64le.config 32). The guest must build the statement itself, except
    # where the lab's shim cannot supply an input (SHIM_CANNOT): then "departures" says what.
    # A dedicated POWER9 LPAR, the fixture's (tests/fixtures/sysroot-power9-lpar-smt8: SMT,
    # CACHE, DIE, NUMA), cut to two chips/nodes of two SMT8 big cores: SMT over the small core
    # (property 1 only), CACHE over the big core (its own l2-cache node: the L2 mask is the
    # cpu node's small cores), PKG over the node (two big cores: it stays), NUMA over both.
    # Its shim's l2-cache and l3-cache nodes (per big core) have an LPAR's sizes (wblab/lpar.py
    # CPUS; the domains read no size), so the guest's L2 and L3 are checked like x86's L3.
    "power9-bigcore": {
        "arch": "ppc64le",
        "doc": "POWER9 dedicated LPAR as sourced: 2 nodes x 2 SMT8 big cores, interleaved SMT4 "
               "small cores, L2 and L3 per big core (through the lab's device-tree shim)",
        "cpu": "power9",
        "qemu": (10, 0),
        "smp": "32,sockets=2,cores=2,threads=8",
        "numa": ["node,nodeid=0,cpus=0-15", "node,nodeid=1,cpus=16-31"],
        "shim": {"name": POWERVM_SHIM, "thread_groups": {1: POWERVM_SMT8_GROUPS},
                 "l2_cache": "core", "cache_kib": {2: 512, 3: 10240}, "shared_processor": False,
                 "coregroup": None, "nr_cpus": 32},
        "domains": [("SMT", "small-core"), ("CACHE", "core"), ("PKG", "node"), ("NUMA", "all")],
    },
    # A dedicated POWER10 LPAR (9538abee18cc's and Shrikanth Hegde's captures): SMT over the
    # small core, properties 1 and 2 naming the same groups so the L2 is the small core's and no
    # CACHE level exists (SMT is the LLC), MC over the coregroup (both big cores here), PKG over
    # the same 16 CPUs degenerates. POWER11 gets no preset of its own: nothing in smp.c tells it
    # from POWER10 (DOMAINS.md, sections 3-5). The lab's shim supplies everything but the
    # coregroup (SHIM_CANNOT): the guest builds SMT and PKG, PKG over the same 16 CPUs as the
    # stated MC, with the same flags (neither shares the LLC, which is SMT either way).
    "power10-smallcore": {
        "arch": "ppc64le",
        "doc": "POWER10 dedicated LPAR as sourced: 2 SMT8 big cores of interleaved SMT4 small "
               "cores, L2 per small core, one coregroup, one node; through the lab's device-tree "
               "shim, which has no coregroup: PKG 0-15 where the LPAR has MC 0-15",
        "cpu": "power10",
        "qemu": (10, 0),
        "smp": "16,sockets=1,cores=2,threads=8",
        "numa": [],
        "shim": {"name": POWERVM_SHIM,
                 "thread_groups": {1: POWERVM_SMT8_GROUPS, 2: POWERVM_SMT8_GROUPS},
                 "l2_cache": None, "shared_processor": False, "coregroup": "all", "nr_cpus": 16},
        "domains": [("SMT", "small-core"), ("MC", "all")],
        "departures": {"domains": [("SMT", "small-core"), ("PKG", "node")],
                       "cause": SHIM_CANNOT["coregroup"]},
    },
}

# How qemu runs a guest of each architecture the lab boots: qemu and its machine, the level
# between socket and core that -smp may name, the console and the port the results come back on
# (guest-init.sh's WBLAB_XFER); with the architecture's own facts from registry.json
# (triplet, deb, elf_machine, ...).
ARCHES = {
    # x86 -smp has modules between dies and cores since qemu 9.0 (a module: the cores that share
    # an L2 when -machine smp-cache puts it there, Intel's E-core cluster).
    "x86_64": {"qemu": "qemu-system-x86_64", "package": "qemu-system-x86", "machine": [],
               "middle": "dies", "inner": "modules", "console": "ttyS0",
               "xfer_dev": "/dev/ttyS1"},
    # virt has one PL011: the results use a virtio console (hvc0), which no console= names.
    "arm64": {"qemu": "qemu-system-aarch64", "package": "qemu-system-arm",
              "machine": ["-M", "virt,gic-version=3"], "middle": "clusters",
              "console": "ttyAMA0", "xfer_dev": "/dev/hvc0"},
    # pseries (a PAPR guest, PowerVM's machine): the console is a hypervisor vty (spapr-vty,
    # hvc0); results go back on a virtio console on PCI, hvc1 (hvc0's slot is the boot console's).
    # A second vty carried them at 15 KB/s on power9-bigcore and about 100 B/s on
    # power10-smallcore (docs/lab-validation.md#power-lpar). SMT under TCG needs qemu >= 8.1 (a
    # preset's "qemu"); -smp has no level between socket and core.
    "ppc64le": {"qemu": "qemu-system-ppc64", "package": "qemu-system-ppc",
                "machine": ["-M", "pseries"], "middle": "dies",
                "console": "hvc0", "xfer_dev": "/dev/hvc1"},
}
for _arch, _qemu in ARCHES.items():
    _qemu.update(ARCHITECTURES[_arch])


def preset_arch(preset):
    return PRESETS.get(preset, {}).get("arch", "x86_64")


def missing_shim(preset):
    """The name of the shim `preset`'s guest needs and the lab lacks, or None."""
    shim = PRESETS.get(preset, {}).get("shim")
    return shim["name"] if shim and shim["name"] not in SHIMS else None


def unsupplied(shim):
    """The inputs a preset's "shim" asks for that the lab's shim cannot supply (SHIM_CANNOT)."""
    return [k for k in SHIM_CANNOT if shim.get(k) is not None]


def check_bootable(preset):
    """LabError in one line, before anything boots, if `preset`'s guest needs a shim the lab lacks,
    or an input its shim cannot supply while the preset states no departure: either way qemu's
    own firmware would build other domains than the preset says."""
    shim = missing_shim(preset)
    if shim:
        raise LabError(f"preset {preset} needs the lab's {shim} shim, which is not built yet "
                       "(runners/lab/power/DOMAINS.md, section 6): without it the guest would "
                       "build qemu's domains, not the preset's")
    p = PRESETS.get(preset, {})
    lacking = unsupplied(p["shim"]) if "shim" in p else []
    if lacking and not p.get("departures"):
        raise LabError(f"preset {preset}: the lab's shim cannot supply its {', '.join(lacking)} "
                       f"({SHIM_CANNOT[lacking[0]]}) and the preset states no departure")


def shim_cmdline(shim):
    """The guest kernel's command line that turns the POWER shim on for a preset's "shim"
    (patches/shim/powervm-lpar.patch reads it: prom_init.c and pseries/lpar.c), e.g.
    "wblab_shim=tg1,l2=512,l3=10240,dedicated"; LabError in one line for inputs it cannot
    write. Inputs in SHIM_CANNOT are left out: the preset's departures say what that costs."""
    if shim.get("name") != POWERVM_SHIM:
        raise LabError(f"shim {shim.get('name')!r}: the lab has {', '.join(sorted(SHIMS))}")
    groups = shim.get("thread_groups") or {}
    if 1 not in groups or not set(groups) <= {1, 2}:
        raise LabError(f"shim thread_groups {sorted(groups)}: properties 1 or 1 and 2 "
                       "(smp.c init_big_cores() needs property 1)")
    if any(g != POWERVM_SMT8_GROUPS for g in groups.values()):
        raise LabError(f"shim thread_groups: the shim writes PowerVM's interleaved small cores "
                       f"{POWERVM_SMT8_GROUPS} only")
    tokens = ["tg12" if 2 in groups else "tg1"]
    kib = shim.get("cache_kib") or {}
    if shim.get("l2_cache") == "core":
        if not set(kib) <= {2, 3} or 2 not in kib or any(
                not isinstance(v, int) or v < 1 for v in kib.values()):
            raise LabError(f"shim cache_kib {kib}: KiB of the L2 (and L3) per big core")
        tokens += [f"l{lvl}={kib[lvl]}" for lvl in sorted(kib)]
    elif shim.get("l2_cache") is not None or kib:
        raise LabError(f"shim l2_cache {shim.get('l2_cache')!r}: 'core' (with cache_kib) or "
                       "None")
    if not shim.get("shared_processor"):
        tokens.append("dedicated")
    return "wblab_shim=" + ",".join(tokens)


def shim_caches(shim):
    """The caches above L1 the shim's guest shows, as a preset's "caches" ({level: scope}): the
    shim's cache nodes, one per big core, or None."""
    if shim.get("l2_cache") != "core":
        return None
    return {lvl: "core" for lvl in sorted(shim.get("cache_kib") or {})}


def bootable_presets(arch=None):
    """The presets the lab can boot (every shim they name is built), of `arch` if given."""
    return [p for p in PRESETS
            if (arch is None or preset_arch(p) == arch) and not missing_shim(p)]


def xfer_args(arch, xfer):
    """qemu arguments that put the guest's transfer port into the file `xfer`."""
    if arch == "x86_64":
        return ["-serial", f"file:{xfer}"]
    bus = "virtio-serial-pci" if arch == "ppc64le" else "virtio-serial-device"
    return ["-device", bus, "-chardev", f"file,id=wblabxfer,path={xfer}",
            "-device", "virtconsole,chardev=wblabxfer"]




def parse_kv(text):
    """'8,sockets=2,cores=2' -> ('8', {'sockets': '2', 'cores': '2'}), keeping repeated keys."""
    head, kv = None, {}
    for i, tok in enumerate(text.split(",")):
        if "=" in tok:
            k, v = tok.split("=", 1)
            kv.setdefault(k, []).append(v)
        elif i == 0:
            head = tok
        else:
            # qemu's "cpus=0-1,3" continuation: a bare token after cpus= extends it.
            if "cpus" in kv:
                kv["cpus"][-1] += "," + tok
            else:
                raise LabError(f"cannot parse '{tok}' in '{text}'")
    return head, kv


def count(text, where):
    """A positive count of a qemu argument, or LabError naming it."""
    if not text.isdigit() or int(text) < 1:
        raise LabError(f"{where}: {text!r} is not a positive count")
    return int(text)


def parse_smp(smp, arch="x86_64"):
    """-smp's counts; the level between socket and core is `dies` (x86_64) or `clusters` (arm64),
    returned as "dies" either way; x86's modules (between dies and cores) as "modules"."""
    head, kv = parse_kv(smp)
    middle, inner = ARCHES[arch]["middle"], ARCHES[arch].get("inner", "modules")
    known = {"cpus", "sockets", middle, "cores", "threads", "maxcpus"}
    unknown = set(kv) - known - ({inner} if "inner" in ARCHES[arch] else set())
    if unknown:
        raise LabError(f"-smp '{smp}': the lab does not model {', '.join(sorted(unknown))}"
                       f" on {arch}")
    one = {k: count(v[-1], f"-smp '{smp}' {k}") for k, v in kv.items()}
    if head is not None:
        one["cpus"] = count(head, f"-smp '{smp}'")
    dies, modules, threads = one.get(middle, 1), one.get(inner, 1), one.get("threads", 1)
    sockets, cores = one.get("sockets"), one.get("cores")
    cpus = one.get("cpus")
    if cores is None and sockets is None:
        raise LabError(f"-smp '{smp}': give sockets= and cores= so the expected topology is exact")
    if cores is None:
        cores = cpus // (sockets * dies * modules * threads)
    if sockets is None:
        sockets = cpus // (dies * modules * cores * threads)
    total = sockets * dies * modules * cores * threads
    if cpus is None:
        cpus = total
    if cpus != total:
        raise LabError(f"-smp '{smp}': {cpus} CPUs but sockets*dies*modules*cores*threads = "
                       f"{total} (hot-pluggable CPUs are not modelled)")
    return {"cpus": cpus, "sockets": sockets, "dies": dies, "modules": modules, "cores": cores,
            "threads": threads}


def strided_order(t):
    """qemu CPU indexes in the order a strided guest numbers them: every core's first thread, then
    every core's second, ... (x86 servers' numbering: sibling = cpu + cores)."""
    return sorted(range(t["cpus"]), key=lambda i: (i % t["threads"], i // t["threads"]))


def place_on_nodes(cpus, numa_args):
    """Sets each CPU record's "node" from -numa node,cpus= and -numa cpu,node-id=,<level>-id=."""
    for arg in numa_args:
        kind, kv = parse_kv(arg)
        where = f"-numa '{arg}'"
        if kind not in ("node", "cpu", "dist"):
            raise LabError(f"{where}: the lab models -numa node, cpu and dist, not {kind!r}")
        if kind == "node":
            node = node_id(kv.get("nodeid", ["0"])[-1], where)
            for text in kv.get("cpus", []):
                for c in numa_cpus(text, where):
                    if c not in cpus:
                        raise LabError(f"{where}: CPU {c} is not among -smp's {len(cpus)}")
                    cpus[c]["node"] = node
        elif kind == "cpu":
            if "node-id" not in kv:
                raise LabError(f"{where}: no node-id=")
            node = node_id(kv["node-id"][-1], where)
            sel = {k[:-3]: node_id(v[-1], where) for k, v in kv.items()
                   if k.endswith("-id") and k != "node-id"}
            for info in cpus.values():
                if all(info.get(k) == v for k, v in sel.items()):
                    info["node"] = node


def expected_topology(smp, numa_args, arch="x86_64", caches=None, numbering="contiguous"):
    """CPU index -> socket/die/core ids as qemu lays them out, threads innermost (x86: hw/i386/x86.c
    x86_topo_ids_from_idx; arm64 virt: virt_possible_cpu_arch_ids, clusters where x86 has dies),
    the thread siblings, the caches (x86: an L3 per die, see PRESETS; arm64: `caches`, {level:
    "core" | "cluster" | "socket"}, and no L3 unless it names one) and the NUMA node (qemu puts
    CPUs no -numa names on node 0). Keyed by the guest's CPU number: qemu's index, or with
    numbering "strided" (arm64, whose device tree the lab orders) strided_order's position;
    "index" keeps qemu's."""
    t = parse_smp(smp, arch)
    if numbering not in ("contiguous", "strided"):
        raise LabError(f"numbering {numbering!r}: contiguous or strided")
    if numbering == "strided" and (arch != "arm64" or any("cpus=" in a for a in numa_args)):
        raise LabError("strided numbering: arm64 guests only, with -numa by socket-id")
    cpus = {}
    per_module = t["threads"] * t["cores"]
    for i in range(t["cpus"]):
        thread = i % t["threads"]
        core = (i // t["threads"]) % t["cores"]
        module = (i // per_module) % t["modules"]
        die = (i // (per_module * t["modules"])) % t["dies"]
        socket = i // (per_module * t["modules"] * t["dies"])
        cpus[i] = {"socket": socket, "die": die, "module": module, "core": core, "thread": thread,
                   "node": 0, "index": i}
    if numbering == "strided":
        cpus = {n: cpus[i] for n, i in enumerate(strided_order(t))}
    place_on_nodes(cpus, numa_args)
    keys = {"core": ("socket", "die", "module", "core"), "module": ("socket", "die", "module"),
            "cluster": ("socket", "die"), "socket": ("socket",)}
    for i, info in cpus.items():
        def sharing(scope):
            return {j for j, o in cpus.items() if all(o[k] == info[k] for k in keys[scope])}
        info["siblings"] = sharing("core")
        # A POWER big core's two SMT4 small cores, as PowerVM's ibm,thread-groups names them
        # (POWERVM_SMT8_GROUPS: threads 0,2,4,6 and 1,3,5,7); only an SMT8 core has them.
        group = next((g for g in POWERVM_SMT8_GROUPS if info["thread"] in g), ())
        info["small_core"] = ({j for j in info["siblings"] if cpus[j]["thread"] in group}
                              if t["threads"] == 8 else None)
        if arch == "x86_64" and not caches:
            info["l3"] = sharing("cluster")
            continue
        if arch == "x86_64":  # a preset that states its caches: modules, L2 clusters
            info["cluster"] = sharing("module")
        if arch == "arm64":
            info["cluster"] = sharing("cluster")
        info["caches"] = {lvl: sharing(scope) for lvl, scope in (caches or {}).items()}
        info["l3"] = info["caches"].get(3)
    nodes = {}
    for i, info in cpus.items():
        nodes.setdefault(info["node"], set()).add(i)
    return {"smp": t, "cpus": cpus, "nodes": nodes}


def node_id(text, where):
    if not text.isdigit():
        raise LabError(f"{where}: {text!r} is not an id")
    return int(text)


def numa_cpus(text, where):
    try:
        return parse_cpu_list(text)
    except ValueError:
        raise LabError(f"{where}: {text!r} is not a CPU list") from None


def add_memory_backends(numa_args, mem_mb):
    """-numa node entries without mem=/memdev= get an equal share of the guest RAM through a
    memory-backend-ram object (qemu >= 5.1 pc machines refuse nodes without memory once -numa is
    given: 'total memory for NUMA nodes should equal RAM size')."""
    nodes = [a for a in numa_args if a.split(",", 1)[0] == "node" and "mem" not in a]
    if not nodes:
        return [], list(numa_args)
    if mem_mb % len(nodes):
        raise LabError(f"--mem {mem_mb} does not split evenly over {len(nodes)} NUMA nodes")
    objects, out, k = [], [], 0
    for a in numa_args:
        if a in nodes:
            objects.append(f"memory-backend-ram,id=wblabmem{k},size={mem_mb // len(nodes)}M")
            a = f"{a},memdev=wblabmem{k}"
            k += 1
        out.append(a)
    return objects, out


# --accel: tcg (the default) emulates every instruction on host threads, so timings are EMULATED;
# kvm runs the vCPUs on the host's CPUs (hardware virtualization): -cpu and -smp keep the topology,
# and the timings are a virtual machine's, neither emulated nor a bare-metal host's.
ACCELERATORS = ("tcg", "kvm")
KVM_DEVICE = "/dev/kvm"
KVM_BANNER = "KVM guest timings: virtual-machine vCPUs, not comparable with a bare-metal host"


def accel_args(accel, tcg_thread=None):
    """qemu's -accel for `accel`; `tcg_thread` (single or multi, default single) is TCG's only."""
    if accel == "tcg":
        return ["-accel", f"tcg,thread={tcg_thread or 'single'}"]
    if accel != "kvm":
        raise LabError(f"--accel {accel}: one of {', '.join(ACCELERATORS)}")
    if tcg_thread:
        raise LabError("--tcg-thread applies to --accel tcg only")
    return ["-accel", "kvm"]


def emulated(accel):
    """Whether `accel`'s guest timings are emulated (TCG) rather than run on the host's CPUs."""
    return accel != "kvm"


def banner(accel):
    """The line that heads every guest timing the lab shows."""
    return BANNER if emulated(accel) else KVM_BANNER


def check_kvm(device=None):
    """LabError in one line unless this user can open `device` (default KVM_DEVICE) for reading
    and writing."""
    device = device or KVM_DEVICE
    if not os.path.exists(device):
        raise LabError(f"--accel kvm: no {device} (KVM is off or absent here: use --accel tcg)")
    if not os.access(device, os.R_OK | os.W_OK):
        raise LabError(f"--accel kvm: {device} is not readable and writable by this user "
                       "(add it to group kvm, or use --accel tcg)")
