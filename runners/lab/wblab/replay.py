"""Each cell's decision records replayed under every lab policy's model (`wakebench replay`,
docs/policy-model.md#decision-records): agreement under the cell's own policy first, then under
each other one, so that a wrong pairing (a setting replayed as another policy) shows failing where
the policies decide differently. Reads `wakebench replay --json`; renders only what it read."""
from .agreement import run_json
from .registry import KERNELS as POLICIES

GOAL = 99.9  # percent of all wakeups (records and those without one) agreeing in CPU and rule


def cell_replay(wakebench, results, own):
    """{policy: replay summary} for the cell's result set, `own` first; {"unavailable": why} when
    the set has no records or replay fails. Each other policy's summary carries `split`: the
    records on which its model and the own policy's decide differently (discriminating)."""
    out, full = {}, {}
    for policy in [own] + [p for p in POLICIES if p != own]:
        data, msg = run_json([wakebench, "replay", results, "--policy", policy, "--json"])
        if data is None:
            return {"unavailable": msg}
        full[policy] = data
        out[policy] = {k: data.get(k) for k in ("wakeups", "decisions", "unrecorded", "agree",
                                                "rules", "uncovered", "wake_wide")}
        out[policy]["first_disagreements"] = data["disagreements"][:5]
        if policy != own:
            out[policy]["split"] = discriminating(full[own], data)
    return out


def discriminating(own, other):
    """On the records where the two models decide differently (CPU or rule): how many, and how
    many the kernel's decision matched under each ({"records", "own", "other"})."""
    def models(data):
        return {(d["case"], d["index"]): (d["model"]["rule"], d["model"]["cpu"])
                for d in data["disagreements"]}
    a, b = models(own), models(other)
    split = [k for k in set(a) | set(b) if a.get(k) != b.get(k)]
    return {"records": len(split), "own": sum(k not in a for k in split),
            "other": sum(k not in b for k in split)}


def percent(r):
    return 100.0 * r["agree"] / r["wakeups"] if r["wakeups"] else 0.0


def verdict(replays, own):
    """'goal met' when the own policy's model reproduces at least GOAL% of the wakeups."""
    if "unavailable" in replays:
        return "not replayed"
    return "goal met" if percent(replays[own]) >= GOAL else "short of the goal"


def split_text(split):
    """'0 of 14': of the records where this model and the own one differ, those it matched."""
    return f"{split['other']} of {split['records']}" if split else "-"


def render(cells):
    """Markdown: one row per (preset, column, own policy, replays) of `cells`."""
    head = "| preset | kernel | wakeups | records | wake_wide | verdict | " + \
        " | ".join(POLICIES) + " |"
    lines = [head, "|" + "---|" * (6 + len(POLICIES))]
    for preset, column, own, replays in cells:
        if "unavailable" in replays:
            lines.append(f"| {preset} | {column} | - | - | - | not replayed: "
                         f"{replays['unavailable']} |" + " |" * len(POLICIES))
            continue
        r = replays[own]
        shares = [f"**{percent(replays[p]):.2f}%**" if p == own else
                  f"{percent(replays[p]):.2f}% ({split_text(replays[p].get('split'))})"
                  for p in POLICIES]
        wide = (r.get("wake_wide") or {}).get("count", "-")
        lines.append(f"| {preset} | {column} | {r['wakeups']} | {r['decisions']} | {wide} | "
                     f"{verdict(replays, own)} | " + " | ".join(shares) + " |")
    return lines


# Rules no lab guest has what they need for (issue "The patches where they act", its goals):
# coverage lists them as exempt, with the reason, instead of unreached.
EXEMPT = {
    "find_energy_efficient_cpu": "no energy model in any guest",
    "sis_select_idle_capacity": "no asymmetric CPU capacity in any guest",
    "sched_balance_find_dst_cpu": "reached only by exec and fork balancing, not a wakeup",
    "select_fallback_rq": "needs the chosen CPU to go offline or out of the mask",
    "sis_no_sd_llc": "every guest CPU has an LLC domain",
    "sis_kthread": "needs a per-CPU kthread waking the wakee",
}


def coverage(cells):
    """{rule: {policy: (records, agreed)}}: the kernel records of each cell under its own
    policy's model, by the rule the kernel took, added up per own policy over the cells; every
    rule a replay named (reached or uncovered) is a key."""
    out = {}
    for _, _, own, replays in cells:
        if "unavailable" in replays:
            continue
        r = replays[own]
        for rule in r.get("uncovered") or []:
            out.setdefault(rule, {})
        for rule, t in (r.get("rules") or {}).items():
            n, a = out.setdefault(rule, {}).get(own, (0, 0))
            out[rule][own] = (n + t["count"], a + t["agree"])
    return out


def coverage_note(rule, per_policy):
    """'exempt: why', 'unreached' or ''."""
    if sum(n for n, _ in per_policy.values()):
        return ""
    return f"exempt: {EXEMPT[rule]}" if rule in EXEMPT else "unreached"


def render_coverage(cells):
    """Markdown: one row per rule, one column per own policy: 'records / agreed'."""
    cov = coverage(cells)
    lines = ["| rule | " + " | ".join(POLICIES) + " | note |",
             "|" + "---|" * (len(POLICIES) + 2)]
    for rule in sorted(cov):
        cols = [f"{n} / {a}" if n else "-" for n, a in
                (cov[rule].get(p, (0, 0)) for p in POLICIES)]
        lines.append(f"| {rule} | " + " | ".join(cols) + f" | {coverage_note(rule, cov[rule])} |")
    return lines
