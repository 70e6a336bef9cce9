"""matrix.md from a judged matrix_cells.Matrix; reads it, changes nothing: with --runs the A/B
verdict over the runs first, then how to read the table, the kernels and cases files, the
replayed decisions, the tables (matrix_render.py), the kernel named from its placements, the gated
kernel's fidelity and the dropped cases."""
import datetime
import os

from . import changes, confusion, replay
from .cases import provenance_lines
from .fidelity import FIDELITY_SLACK, fidelity_lines
from .matrix_cells import confusion_rows
from .matrix_judge import SHIFT_EPS
from .matrix_render import ADMITS, MATCH, render, runs_lines


def kernel_line(policy, info):
    keys = ("patch_file", "tree", "source_version", "source_package", "patch_sha256",
            "tree_sha256", "config_sha256", "lockdep", "build_seconds")
    return f"- {policy}: " + ", ".join(
        f"{k} {str(info[k])[:16] if k.endswith('sha256') else info[k]}" for k in keys if k in info)


def span_text(values):
    """A set of counts as one figure or a range, e.g. "6" or "3-6" ("?" when empty)."""
    n = sorted(values)
    return "?" if not n else str(n[0]) if n[0] == n[-1] else f"{n[0]}-{n[-1]}"


def sample_text(matrix):
    """The fresh pairs the cells' kernel-placed cases ran and the round trips of each, e.g.
    "3-6 fresh pairs x 2000"."""
    cells = [cell.collected for pk in matrix.cells.values() for cell in pk.values()
             if cell.collected]
    return (f"{span_text({k for c in cells for k in c.pairs})} fresh pairs x "
            f"{span_text({k for c in cells for k in c.round_trips})}")


def legend(matrix, now):
    """How to read the tables."""
    floor = (f"or within mainline's own shift on that row between this run and another run of "
             f"the matrix ({matrix.aa}), " if matrix.aa else "")
    return (
        f"Rendered {now:%Y-%m-%d %H:%M} UTC from each cell's results.json (the guests' own run "
        "times are in their lab-summary.json). Per cell: the predictor's verdict for the kernel's "
        "own policy and the strict agreement of its placements with that policy's steady state "
        "(1 - total variation distance, round trips of " + sample_text(matrix) + "): "
        f"MATCH within {MATCH}; EXPLAINED, a strict miss that a mix with the model's "
        f"alternatives brings within {MATCH} (rNN%: the agreement with that mix); NO-PREDICTION, "
        f"the model's range {ADMITS} of what the cpuset allows, so it could not have failed; "
        "MISS. Only MATCH is agreement; **bold** marks every other word. Then for a patched "
        "kernel the observed / predicted shift against mainline's run on the same preset: the "
        "mean distance of the wakee from the waker in class steps (same-cpu 0, smt-sibling 1, "
        "...; negative = closer to the waker), predicted from the two steady states alone; a "
        f"shift under {SHIFT_EPS:g} " + floor + "counts as none. Where the steady states differ: "
        "as predicted, not seen or wrong way; where they are equal: none or unpredicted. A case "
        "marked (e) depends on emulation: the policies it tells apart differ without the "
        "emulation-only alternatives (the list below the confusion table).")


def rendered_at():
    """The time matrix.md says it was rendered: now, or $SOURCE_DATE_EPOCH (the reproducible-builds
    convention), so that a committed rendering can be made again byte for byte."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    return datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch else \
        datetime.datetime.now(datetime.timezone.utc)


def render_document(matrix, now=None):
    """The whole matrix.md; `now` (UTC, default rendered_at()) is the time it says it was
    rendered."""
    now = now or rendered_at()
    head = runs_lines(matrix) + [legend(matrix, now), "", "Kernels:"]
    head += [kernel_line(p, matrix.kernel_meta.get(p, {})) for p in matrix.kernels]
    head += ["", "Cases (the file each preset ran, and whether it was committed unchanged before "
             "the guests ran):"]
    head += [x for p, rec in matrix.cases.items() for x in provenance_lines(p, rec)]
    return "\n".join(head + [""] + replay_section(matrix) + changes_section(matrix)) + "\n\n" + \
        render(matrix) + \
        "\n".join(extra_sections(matrix))


def own_policy(name, replays):
    """The policy a cell's records were replayed as its own: the first of its replays (a gated
    setting's, a user kernel's mainline), else the column's last part."""
    return next((p for p in replays if p != "unavailable"), name.split(":")[-1])


def collected(matrix, key):
    """(preset, column, what the cell collected under `key`) of every cell that has it."""
    return [(preset, name, getattr(cell.collected, key))
            for preset, per_kernel in matrix.cells.items()
            for name, cell in per_kernel.items()
            if cell.collected and getattr(cell.collected, key)]


def heading(title, text):
    """A section's title and its wrapped explanation."""
    return [f"#### {title}", ""] + confusion.wrap(text, "") + [""]


def replay_section(matrix):
    """The decisions first (wblab/replay.py): each cell's records under every policy's model."""
    cells = [(p, name, own_policy(name, r), r) for p, name, r in collected(matrix, "replay")]
    if not cells:
        return []
    return heading(
        "Replay: the kernel's own decisions under each policy's model",
        "Per cell, every wakeup of the cases' tasks (sched_waking) and the decision records "
        "the kernel's event gave them, replayed inputs only (`wakebench replay`): the share "
        f"of wakeups whose CPU and rule each model reproduced (bold: the kernel's own policy; "
        f"goal {replay.GOAL}%; a wakeup without a record counts as a disagreement). The "
        "other columns are the wrong pairings, each with the records on which its model and "
        "the kernel's own policy's decide differently and how many of those it matched: a "
        "faithful kernel matches its own model on all of them and the other on none.") + \
        replay.render(cells) + [""] + coverage_section(cells)


def changes_section(matrix):
    """The decisions each kernel changed against mainline's model (wblab/changes.py)."""
    cells = collected(matrix, "changes")
    if not cells:
        return []
    return heading(
        "The decisions each kernel changed against mainline's model",
        "Per cell, the decision records mainline's model does not reproduce (`wakebench "
        "replay --changed mainline`), each at the first point where the kernel's recorded "
        "path and the model's part (wake_wide, want_affine, the rule, the CPU): for a patch "
        "nobody modelled, what it changed; mainline's own cell on the same preset is the "
        "floor. Marked: records a lab mutation's marker flagged (its changed branch decided) "
        f"and how many were found changed (goal: >= {changes.MARKED_FOUND:g}% of at least "
        f"{changes.MIN_MARKED} found, <= {changes.OUTSIDE:g}% of all records changed outside "
        "them). Own model's splits: the records where the kernel's own policy's model parts "
        "from mainline's, how many were found changed, and the changes outside them.") + \
        changes.render(cells)


def coverage_section(cells):
    """Every rule against the kernels' own records (wblab/replay.py coverage)."""
    return heading(
        "Rule coverage: the kernels' records by the rule each took",
        "Per rule of docs/policy-model.md#rules and per kernel (its own policy), the "
        "decision records the kernel's event gave in this matrix's cells and how many of "
        "them that policy's model reproduced (CPU and rule); kernel records only. A rule no "
        "record reached is unreached, or exempt where no guest has what it needs.") + \
        replay.render_coverage(cells) + [""]


def extra_sections(matrix):
    """The kernel named from its placements (one row per column of the table), the gated
    kernel's fidelity and the dropped cases."""
    lines = confusion.render(matrix.confusion, confusion_rows(matrix))
    if matrix.fidelity:
        lines += ["#### The gated kernel against the per-patch kernels", ""]
        lines += confusion.wrap(
            "Per discriminating case, the strict TV between the observed class shares of the "
            "gated kernel with one feature on (gated:mainline: all off) and the per-patch "
            "kernel's, against mainline's own run-to-run TV on that case (this run against "
            f"--aa's) plus {FIDELITY_SLACK:g}. Every repetition of a gated cell read its feature "
            "state back as intended (else the cell failed above).", "")
        lines += [""] + fidelity_lines(matrix.fidelity) + [""]
    dropped = [(p, k, d) for p, pk in matrix.cells.items() for k, cell in pk.items()
               if cell.collected for d in cell.collected.confusion.get("dropped", [])]
    return lines + confusion.dropped_lines(dropped)
