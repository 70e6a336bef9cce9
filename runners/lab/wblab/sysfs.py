"""What the guest saw: parse the sysfs dump guest-init.sh ships and compare it with the topology the
qemu arguments asked for. Placement classes are wakebench's own (`wakebench topology --json
--topology <guest xml>`, see cli.py), never computed here."""
from .cpulist import format_cpu_list, parse_cpu_list

def parse_sysfs(text):
    cpus, caches, nodes, domains, meta = {}, {}, {}, {}, {}
    for line in text.splitlines():
        f = line.split()
        if not f:
            continue
        if f[0] == "cpu" and len(f) >= 4:
            cpus.setdefault(int(f[1]), {})[f[2]] = f[3]
        elif f[0] == "cache" and len(f) >= 6:
            caches.setdefault(int(f[1]), []).append(
                {"index": f[2], "level": int(f[3]), "type": f[4], "shared": parse_cpu_list(f[5])})
        elif f[0] == "node" and len(f) >= 3:
            nodes[int(f[1])] = parse_cpu_list(f[2])
        elif f[0] == "domain" and len(f) >= 5:
            mask = int(f[4].replace(",", ""), 16)
            span = {b for b in range(mask.bit_length()) if mask >> b & 1}
            domains.setdefault(int(f[1]), []).append({"level": int(f[2]), "name": f[3],
                                                      "span": span})
        elif f[0] in ("kernel", "cmdline"):
            meta[f[0]] = line.split(None, 1)[1] if len(f) > 1 else ""
    return {"cpus": cpus, "caches": caches, "nodes": nodes, "domains": domains, "meta": meta}


def guest_cache(sysfs, cpu, level=3):
    """The CPUs sharing `cpu`'s unified cache of `level`, or None."""
    for c in sysfs["caches"].get(cpu, []):
        if c["level"] == level and c["type"] == "Unified":
            return c["shared"]
    return None


def guest_node(sysfs, cpu):
    for n, cl in sysfs["nodes"].items():
        if cpu in cl:
            return n
    return None


def check_sysfs(expected, sysfs):
    """Every difference between what the qemu arguments asked for and what the guest kernel
    reports in sysfs, as one-line strings."""
    mism = []
    exp_cpus, got_cpus = set(expected["cpus"]), set(sysfs["cpus"])
    if exp_cpus != got_cpus:
        mism.append(f"online CPUs: expected {format_cpu_list(exp_cpus)}, "
                    f"guest has {format_cpu_list(got_cpus)}")
    for c in sorted(exp_cpus & got_cpus):
        e, g = expected["cpus"][c], sysfs["cpus"][c]
        sib = parse_cpu_list(g.get("thread_siblings_list", ""))
        if sib != e["siblings"]:
            mism.append(f"cpu{c} thread_siblings_list: expected {format_cpu_list(e['siblings'])}, "
                        f"guest {format_cpu_list(sib) or 'none'}")
        for level, want in {3: e["l3"], **e.get("caches", {})}.items():
            got = guest_cache(sysfs, c, level)
            if got != want:
                mism.append(f"cpu{c} L{level} shared_cpu_list: expected "
                            f"{format_cpu_list(want) if want is not None else f'no L{level}'}, "
                            f"guest {format_cpu_list(got) if got is not None else f'no L{level}'}")
        if "cluster" in e:
            got = parse_cpu_list(g.get("cluster_cpus_list", ""))
            if got != e["cluster"]:
                mism.append(f"cpu{c} cluster_cpus_list: expected {format_cpu_list(e['cluster'])}"
                            f", guest {format_cpu_list(got) or 'none'}")
        n = guest_node(sysfs, c)
        if n != e["node"]:
            mism.append(f"cpu{c} NUMA node: expected node{e['node']}, guest node{n}")
    exp_nodes = {n: cl for n, cl in expected["nodes"].items()}
    got_nodes = {n: cl for n, cl in sysfs["nodes"].items() if cl}
    for n in sorted(set(exp_nodes) | set(got_nodes)):
        if exp_nodes.get(n, set()) != got_nodes.get(n, set()):
            mism.append(f"node{n} cpulist: expected {format_cpu_list(exp_nodes.get(n, set()))}, "
                        f"guest {format_cpu_list(got_nodes.get(n, set())) or 'none'}")
    return mism


