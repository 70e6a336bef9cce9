"""The one judge of the matrix: each collected cell's case rows (verdict, agreement, the shift
against mainline's run on the same preset), the gated kernel's fidelity to the per-patch kernels
and the confusion summaries, built once into a matrix_cells.Matrix that nothing changes after."""
from dataclasses import replace

from . import confusion
from .fidelity import GATED, cell_name, fidelity, settings
from .matrix_cells import Row, Shift, confusion_rows
from .wakeup_trace import trace_text

# A shift smaller than this (in class steps, see distance()) is no shift.
SHIFT_EPS = 0.1
# How a patched kernel's observed shift against mainline went, by what the two steady states
# predict: where they differ, "as predicted" (the same way), "not seen" (no shift) or "wrong way";
# where they are equal, "none" or "unpredicted" (a shift beyond mainline's own run-to-run shift on
# that row). The uncertain ranges play no part: they allow almost any shift.
SHIFTS = ("as predicted", "not seen", "wrong way", "none", "unpredicted")


def distance(classes, order):
    """Mean distance of the wakee from the waker in class steps: same-cpu 0, smt-sibling 1, ...
    in the order `wakebench topology --json` lists its classes (nearest first)."""
    rank = {c: i for i, c in enumerate(order)}
    return sum(f * rank[c] for c, f in classes.items())


def direction(x, eps=SHIFT_EPS):
    return 0 if abs(x) < eps else (1 if x > 0 else -1)


def shift_verdict(observed, central, floor=0.0):
    """`observed` against the steady states' shift `central`; a shift within `floor` (mainline's
    own run-to-run difference on that row) or under SHIFT_EPS counts as none."""
    seen, want = direction(observed, max(SHIFT_EPS, floor)), direction(central)
    if want == 0:
        return "none" if seen == 0 else "unpredicted"
    return "as predicted" if seen == want else "not seen" if seen == 0 else "wrong way"


def aa_floors(order, base, other):
    """Per case name: how far mainline's observed placements moved between two runs of the matrix
    (`base`: mainline's agreement report on one preset; `other`: observed_classes() of mainline's
    result set on that preset in the other run), in class steps. A patched kernel's shift within
    that is no shift."""
    return {c["name"]: abs(distance(c["observed"]["classes"], order)
                           - distance(other[c["name"]], order))
            for c in (base or {}).get("cases", []) if c["name"] in other}


def case_shift(c, b, order, floors):
    """Case `c` of a patched kernel's report against the same case `b` of mainline's."""
    observed = round(distance(c["observed"]["classes"], order)
                     - distance(b["observed"]["classes"], order), 3)
    central = distance(c["model"]["classes"], order) - distance(
        (c["mainline_model"] or [{}])[0], order)
    floor = (floors or {}).get(c["name"], 0.0)
    return Shift(observed, round(central, 3), round(floor, 3) if floors is not None else None,
                 shift_verdict(observed, central, floor))


def cell_rows(report, base, order, traces=None, floors=None, shifted=None):
    """Case name -> Row for each compared case of `report` (agreement.json of one preset x
    kernel), with its shift against `base` (mainline's report on the same preset, or None) judged
    with `floors` (case name -> mainline's own shift between two runs, see aa_floors), and its
    wakeup trace from `traces` (case name -> predictions.Trace) as one line. `shifted`: whether
    the cell is another kernel than `base`'s (default: its model is not mainline's; a user
    kernel is held to mainline's model and shifted)."""
    shifted = report["policy"] != "mainline" if shifted is None else shifted
    base_cases = {c["name"]: c for c in (base or {}).get("cases", [])}
    rows = {}
    for c in report["cases"]:
        b = base_cases.get(c["name"])
        shift = case_shift(c, b, order, floors) if b is not None and shifted else None
        rows[c["name"]] = Row(
            c["name"], c["mechanism"], c["wake_flags"], c["verdict"], c["strict_agreement"],
            c["range_agreement"], c["coverage"], c["observed"]["classes"], c["model"]["classes"],
            tuple(c.get("attribution", [])), c.get("uncertain"),
            trace_text(traces[c["name"]]) if c["name"] in (traces or {}) else None, shift)
    return rows


def base_of(name, per_kernel):
    """The cell a column's shifts are against: mainline's, gated:mainline's for a gated one."""
    return per_kernel.get(cell_name("mainline") if name.startswith(GATED) else "mainline")


def report_of(cell):
    return cell.collected.report if cell is not None and cell.collected else None


def judged(per_kernel, order, floors):
    """Each cell of one preset with its rows."""
    return {name: replace(cell, rows=cell_rows(
                cell.collected.report, report_of(base_of(name, per_kernel)), order,
                cell.collected.traces, floors, name not in ("mainline", cell_name("mainline"))))
            if cell.collected else cell for name, cell in per_kernel.items()}


def fidelity_of(per_kernel, policy, aa):
    """gated:<policy> against the per-patch kernel <policy> on one preset (fidelity.fidelity)."""
    cells = [(what, per_kernel.get(what)) for what in (cell_name(policy), policy, "mainline")]
    for what, cell in cells:
        if cell is None or cell.collected is None:
            return {"verdict": "not tested", "why": f"no {what} cell", "cases": []}
    gated, patch, main = (cell.collected for _, cell in cells)
    if patch.discriminating is None:
        return {"verdict": "not tested", "why": f"{policy}'s predictions carry no "
                                                "`discriminates`", "cases": []}
    return fidelity(gated.observed, patch.observed, main.observed, aa,
                    list(patch.discriminating))


def judge(draft, order, aa=None, aa_dir=None):
    """The judged matrix of `draft` (a Matrix of collected cells): per preset the rows of every
    cell (shifts against mainline's run, the gated cells against gated:mainline's, each within
    mainline's own shift between this run and `aa`'s when given), the gated kernel's fidelity to
    the per-patch kernels, and the confusion summaries per column."""
    aa = aa or {}
    cells, fid = {}, []
    for preset, per_kernel in draft.cells.items():
        floors = aa_floors(order, report_of(per_kernel.get("mainline")), aa[preset]) \
            if aa_dir else None
        cells[preset] = judged(per_kernel, order, floors)
        for policy, _ in settings() if cell_name("mainline") in per_kernel else ():
            fid.append((preset, policy, fidelity_of(per_kernel, policy, aa.get(preset))))
    out = replace(draft, cells=cells, fidelity=tuple(fid),
                  aa=str(aa_dir) if aa_dir and draft.cells else None)
    per_row = confusion_rows(out)
    return replace(out, confusion={k: confusion.summary([r for _, r in rows])
                                   for k, rows in per_row.items()})

