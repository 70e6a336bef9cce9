"""The decisions each cell's kernel changed against mainline's model (`wakebench replay --changed
mainline`, runners/lab/KERNELS.md#your-patch): a user's patch's are what it changed, mainline's
own cell is the floor, a policy's kernel is held to its own model's splits from mainline's
(`--expect`), a lab mutation's to its marks. Reads the JSON; renders only what it read."""
from .agreement import run_json
from .confusion import wrap

BASE = "mainline"
# A mutation's goal (issue 54): its marked records found, and no more flagged outside them.
MARKED_FOUND = 99.0    # percent of the marked records
OUTSIDE = 0.05         # percent of all records
MIN_MARKED = 100       # fewer marked records show nothing either way
CASES_SHOWN = 6        # the cases most changed, in a cell's detail


def cell_changes(wakebench, results, expect=None):
    """`replay --changed mainline` of the cell's set (with `--expect` the kernel's own policy,
    when it has one other than mainline): the totals, per case, the first records; or
    {"unavailable": why}."""
    cmd = [wakebench, "replay", results, "--changed", BASE, "--json"]
    if expect and expect != BASE:
        cmd += ["--expect", expect]
    data, msg = run_json(cmd)
    return data if data is not None else {"unavailable": msg}


def pct(n, of):
    return f"{100.0 * n / of:.2f}%" if of else "-"


def counts(d):
    return ", ".join(f"{k} {n}" for k, n in sorted((d or {}).items(), key=lambda x: -x[1]))


def marks_verdict(c):
    """A mutation's: its marked records found and nothing more outside them, or why not."""
    marked, found = c.get("marked", 0), c.get("marked_changed", 0)
    outside = c["split"] - found
    if marked == 0:
        return "-"
    if marked < MIN_MARKED:
        return f"too few marked ({marked} < {MIN_MARKED})"
    ok = 100.0 * found / marked >= MARKED_FOUND and \
        100.0 * outside / c["records"] <= OUTSIDE
    return ("goal met" if ok else "goal missed") + \
        f" ({pct(found, marked)} of the marked found, {pct(outside, c['records'])} outside)"


def expect_text(c):
    e = c.get("expected")
    if not e:
        return "-"
    return f"{e['split']}: found {pct(e['changed'], e['split'])}, " \
           f"{c['split'] - e['changed']} outside"


def floors(cells):
    """Per preset, the share of records mainline's own kernel changed (its column `mainline` or
    the gated kernel's `gated:mainline`), in percent."""
    return {p: 100.0 * c["split"] / c["records"] for p, col, c in cells
            if col in (BASE, "gated:" + BASE) and "unavailable" not in c and c["records"]}


def beyond(c, floor):
    """The changed share beyond the floor, in percentage points ("-": no floor on the preset)."""
    if floor is None or not c["records"]:
        return "-"
    return f"{100.0 * c['split'] / c['records'] - floor:+.2f}"


def table(cells):
    """Markdown: one row per (preset, column, changes) of `cells`."""
    lines = ["| preset | kernel | records | changed | share | beyond the floor (points) | "
             "to another CPU | marked: found | mutation goal | own model's splits |",
             "|---|---|---:|---:|---:|---:|---:|---|---|---|"]
    floor = floors(cells)
    for preset, column, c in cells:
        if "unavailable" in c:
            lines.append(f"| {preset} | {column} | - | - | - | - | - | - | not replayed: "
                         f"{c['unavailable']} | - |")
            continue
        marked = f"{c.get('marked', 0)}: {c.get('marked_changed', 0)}"
        lines.append(f"| {preset} | {column} | {c['records']} | {c['split']} | "
                     f"{pct(c['split'], c['records'])} | {beyond(c, floor.get(preset))} | "
                     f"{c.get('moved', 0)} | {marked} | {marks_verdict(c)} | {expect_text(c)} |")
    return lines


def detail(preset, column, c, first=3):
    """A changed kernel's lines: where it parts, mainline's rule, the states, the classes, the
    cost, the cases, its first records."""
    if "unavailable" in c or c["split"] == 0:
        return []
    cost = c.get("cost_ns")
    changed = sorted((x for x in c.get("cases", []) if x["split"]), key=lambda x: -x["split"])
    cases = ", ".join(f"{x['case']} {x['split']}" for x in changed[:CASES_SHOWN]) + \
        (f" and {len(changed) - CASES_SHOWN} more" if len(changed) > CASES_SHOWN else "")
    classes = {k.replace("->", " -> "): n for k, n in (c.get("by_classes") or {}).items()}
    text = [f"**{preset} x {column}**: where the kernel and mainline's model part: "
            f"{counts(c.get('by_point'))}; mainline's rule: {counts(c.get('by_rule'))}; states: "
            f"{counts(c.get('by_state'))}; classes (mainline -> kernel): "
            f"{counts(classes)}; first-order cost of the kernel's choice: "
            + (f"{cost / 1000:+.2f} us per changed wakeup (pinned medians, a model's sum)"
               if cost is not None else "not priced") + f"; cases: {cases}."]
    lines = wrap(" ".join(text), "")
    for r in c.get("first", [])[:first]:
        lines.append(f"- record {r['index'] + 1} (pid {r['pid']}, {r['point']}"
                     f"{', marked' if r['mark'] else ''}): kernel {r['kernel']['rule']} -> "
                     f"{r['kernel']['cpu']}, mainline's model {r['model']['rule']} -> "
                     f"{r['model']['cpu']}")
    return lines + [""]


def render(cells):
    """The section's table and the details of every cell that changed something."""
    out = table(cells) + [""]
    for preset, column, c in cells:
        out += detail(preset, column, c)
    return out
