"""The matrix's tables and row lists from a judged matrix_cells.Matrix; reads it, changes nothing:
the totals, one table per preset (rows are cases, columns kernels), then the rows by word; and
with --runs the A/B verdict over the runs (runs_lines, which matrix.md opens with)."""
from . import BANNER
from .agreement import MATCH_DISTANCE, NO_PREDICTION_COVERAGE, mix_text, pct_text
from .confusion import wrap
from .matrix_cells import every_row
from .matrix_judge import SHIFTS

MATCH = f"{MATCH_DISTANCE:g}"  # "0.25"
ADMITS = f"admits {NO_PREDICTION_COVERAGE:.0%} or more"  # "admits 90% or more"


def cell_text(r):
    """One table cell: the verdict word and the strict agreement (**bold** unless MATCH), the
    range's agreement after an EXPLAINED; then for a patched kernel the observed / predicted shift
    and how it went."""
    t = f"{r.verdict} {r.agreement * 100:.0f}%"
    if r.verdict == "EXPLAINED":
        t += f" r{r.range_agreement * 100:.0f}%"
    if r.verdict != "MATCH":
        t = f"**{t}**"
    if r.shift is not None:
        t += f" {r.shift.observed:+.2f}/{r.shift.central:+.2f} {r.shift.verdict}"
    return t


def totals(rows):
    """The matrix in a few counts: rows per verdict word (only MATCH is agreement), and how the
    patched kernels' shifts went."""
    words = [r.verdict for r in rows]
    shifts = [r.shift.verdict for r in rows if r.shift is not None]
    predicted = [s for s in shifts if s in SHIFTS[:3]]
    wide = sum((r.coverage or 0) >= NO_PREDICTION_COVERAGE for r in rows)
    return (f"{len(rows)} case rows: {words.count('MATCH')} MATCH (the steady state within TV "
            f"{MATCH}), {words.count('EXPLAINED')} EXPLAINED (a mix with named alternatives), "
            f"{words.count('MISS')} MISS; {words.count('NO-PREDICTION')} NO-PREDICTION (the "
            f"model's range {ADMITS} of what the cpuset allows: counted apart, never as "
            f"agreement). {wide} rows have a range that {ADMITS} (there only the steady state "
            f"could fail). Shifts of the patched kernels against mainline ({len(shifts)} rows): "
            f"where the steady states predict one ({len(predicted)} rows), "
            f"{shifts.count('as predicted')} as predicted, {shifts.count('not seen')} not seen, "
            f"{shifts.count('wrong way')} the wrong way; where they predict none "
            f"({len(shifts) - len(predicted)} rows), {shifts.count('none')} none, "
            f"{shifts.count('unpredicted')} unpredicted.")


def shift_text(s):
    floor = f", mainline's own run-to-run {s.aa_floor:.2f}" if s.aa_floor is not None else ""
    return f"; shift {s.observed:+.2f}, steady states {s.central:+.2f} ({s.verdict}){floor}"


def row_line(p, k, n, r):
    """A row of the lists below the tables: where, what the model and the guest said."""
    return (f"- {p} / {k} / {n}: {r.verdict}, strict {r.agreement * 100:.0f}%, range "
            f"{r.range_agreement * 100:.0f}% (admits {(r.coverage or 0) * 100:.0f}%); "
            f"observed {pct_text(r.observed)}; model {pct_text(r.model)}"
            + (shift_text(r.shift) if r.shift is not None else ""))


def listed(title, intro, rows, details):
    """A titled list of rows, each followed by its `details(row)` lines."""
    if not rows:
        return []
    lines = [f"#### {title}", "", intro, ""]
    for p, k, n, r in rows:
        lines.append(row_line(p, k, n, r))
        lines += [f"  - {d}" for d in details(r)]
    return lines + [""]


def traced(r):
    return [r.trace] if r.trace is not None else []


def alternatives_lines(r):
    u = r.uncertain or {}
    out = [f"best mix {mix_text(u)}"] if u else []
    out += [f"or {pct_text(a['classes'])} on CPUs {a.get('cpus')} once {a.get('cause')}"
            for a in u.get("alternatives", [])]
    return out + traced(r)


def emulated(per_kernel):
    """The case names whose discriminating pairs differ without the emulation-only alternatives
    (the confusion rows of any cell of the preset)."""
    return {r["case"] for cell in per_kernel.values() if cell.collected
            for r in cell.collected.confusion.get("rows", []) if r.get("emulation")}


def preset_table(preset, per_kernel, columns):
    """One preset's table: a row per case, a column per kernel."""
    names = list(dict.fromkeys(n for k in columns if k in per_kernel
                               for n in per_kernel[k].rows))
    marked = emulated(per_kernel)
    lines = [f"#### {preset}", "", "| case | flags | " + " | ".join(columns) + " |",
             "|---|---|" + "---|" * len(columns)]
    for n in names:
        flags = next(per_kernel[k].rows[n].wake_flags for k in columns
                     if k in per_kernel and n in per_kernel[k].rows)
        cells = [cell_text(per_kernel[k].rows[n]) if k in per_kernel and n in per_kernel[k].rows
                 else "-" if k in per_kernel and per_kernel[k].collected else "not run"
                 for k in columns]
        mark = " (e)" if n in marked else ""
        lines.append(f"| {n}{mark} | {flags} | " + " | ".join(cells) + " |")
    return lines + [""]


def verdict_text(c):
    """One case of the run-level comparison as compare judged it, with compare's advice for an
    UNKNOWN."""
    change = "" if c.change_pct is None else f" {c.change_pct:+.1f}%"
    text = (f"{c.case}: {c.verdict or 'not tested'}{change} (level {c.level or '-'}, "
            f"{c.runs[0]} vs {c.runs[1]} runs)")
    if c.verdict != "UNKNOWN":
        return text
    if c.needed is None:
        return text + "; no count decides it"
    aim = f" would show {c.needed_for}" if c.needed_for else " would decide it"
    if c.needed_per_run is not None:
        return text + f"; {c.needed} runs a side of {c.needed_per_run} repetitions" + aim
    return text + f"; {c.needed} repetitions" + aim


def runs_lines(matrix):
    """The A/B verdict over the alternated runs, preset by preset: compare's counts and cases, or
    why a preset was not judged."""
    if not matrix.runs:
        return []
    first = next(iter(matrix.runs.values()))
    a, b = first.kernels
    emulated = any(v.emulated for v in matrix.runs.values())
    lines = [f"#### A/B over runs: {b} against {a}, {first.asked} runs each, alternated", ""]
    lines += wrap(
        f"`wakebench compare` of {a}'s runs -- {b}'s judged each preset on the median RTT"
        + (f" ({BANNER})" if emulated else "") + ", the run the unit where both sides hold a "
        "case in two runs or more (the variance between runs, measured, replaces the A/A floor; "
        "a case's level says which it rests on). The command is in matrix.json (`runs`), "
        "compare's document in <preset>/compare-runs.json. The tables below hold each kernel's "
        "first run only.", "") + [""]
    for preset, v in matrix.runs.items():
        if v.missing:
            lines += wrap(f"- {preset}: NOT JUDGED: {v.missing}")
            continue
        n = v.counts
        lines += wrap(f"- {preset}: {n.get('DIFFERENT', 0)} DIFFERENT ({n.get('slower', 0)} "
                      f"slower), {n.get('SAME', 0)} SAME, {n.get('UNKNOWN', 0)} UNKNOWN")
        lines += [x for c in v.cases for x in wrap(f"  - {verdict_text(c)}", "    ")]
        lines += [x for w in v.warnings for x in wrap(f"  - compare: {w}", "    ")]
    return lines + [""]


def render(matrix):
    """The totals, the markdown table (one per preset), then the rows by word: EXPLAINED (with
    the alternatives), NO-PREDICTION (apart), MISS and every shift the wrong way or unpredicted
    (with the model's reasons and the wakeup trace)."""
    every = every_row(matrix)
    lines = [totals([r for *_, r in every]), ""]
    for preset, per_kernel in matrix.cells.items():
        lines += preset_table(preset, per_kernel, matrix.columns)
    lines += listed("EXPLAINED rows", "A strict miss that a mix of the steady state and the "
                    f"named alternatives brings within {MATCH} (each fresh pair may settle in any "
                    "of them), with the traced wakeups.",
                    [x for x in every if x[3].verdict == "EXPLAINED"], alternatives_lines)
    lines += listed("NO-PREDICTION rows", f"The model's range {ADMITS} of what the cpuset "
                    "allows: whatever the kernel did, the range held it. Not agreement.",
                    [x for x in every if x[3].verdict == "NO-PREDICTION"], traced)
    missing = sorted({(k, cell.missing) for pk in matrix.cells.values()
                      for k, cell in pk.items() if cell.missing})
    if missing:
        lines += ["#### Cells not run or failed", ""] + [f"- {k}: {why}" for k, why in missing] \
            + [""]
    lines += listed("MISS rows and shifts the wrong way or unpredicted", "With the model's "
                    "reasons and the traced wakeups.",
                    [x for x in every if x[3].verdict == "MISS" or x[3].shift is not None
                     and x[3].shift.verdict in ("wrong way", "unpredicted")],
                    lambda r: list(r.why) + traced(r))
    return "\n".join(lines) + "\n"
