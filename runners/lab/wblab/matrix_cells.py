"""The matrix's typed records, each built once: what collection read from a cell's guest
(Collected), a judged case row (Row, with its Shift against mainline), a cell (Cell: judged
rows, or why it is missing), the A/B verdict of two kernels' alternated runs on a preset as
`wakebench compare` gave it (RunsVerdict, its cases CaseVerdict) and the whole matrix (Matrix).
matrix_collect.py reads the guests (matrix_runs.py the alternated runs, through compare),
matrix_judge.py builds the rows and the matrix, matrix_render.py and matrix_document.py only read
them; `to_json` gives matrix.json's layout."""
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Collected:
    """One cell's guest as read back: its agreement report (agreement.json), the fresh pairs its
    kernel-placed cases ran and the round trips each pair ran, its replay summaries, wakeup traces
    (case name -> the result set's `trace`, a predictions.Trace), confusion rows, observed class
    shares of the cases that ran, and the case names whose predictions discriminate a pair of
    policies (None: a wakebench before `discriminates`) and the decisions its kernel changed
    against mainline's model (wblab/changes.py)."""
    report: dict
    pairs: tuple = ()
    round_trips: tuple = ()
    replay: dict | None = None
    traces: dict = field(default_factory=dict)
    confusion: dict = field(default_factory=dict)
    observed: dict = field(default_factory=dict)
    discriminating: tuple | None = None
    changes: dict | None = None


@dataclass(frozen=True)
class RunNote:
    """What a cell's result set says of its run: wakebench's commit, the start time, and the
    kernel's build metadata (its `lab_kernel`, less a gated guest's setting)."""
    git_sha: str | None = None
    captured_at: str | None = None
    kernel: str | None = None
    kernel_info: dict | None = None


@dataclass(frozen=True)
class Shift:
    """A patched kernel's case against mainline's run on the same preset, in class steps: the
    observed shift, the one the two steady states predict, mainline's own run-to-run shift (None
    without --aa) and how it went (matrix_judge.SHIFTS)."""
    observed: float
    central: float
    aa_floor: float | None
    verdict: str


@dataclass(frozen=True)
class Row:
    """One compared case of one cell, judged."""
    name: str
    mechanism: str
    wake_flags: str
    verdict: str
    agreement: float
    range_agreement: float
    coverage: float | None
    observed: dict
    model: dict
    why: tuple = ()
    uncertain: dict | None = None
    trace: str | None = None
    shift: Shift | None = None

    def to_json(self):
        out = {"mechanism": self.mechanism, "wake_flags": self.wake_flags,
               "verdict": self.verdict, "agreement": self.agreement,
               "range_agreement": self.range_agreement, "coverage": self.coverage,
               "observed": self.observed, "model": self.model, "why": list(self.why)}
        if self.uncertain is not None:
            out["uncertain"] = self.uncertain
        if self.trace is not None:
            out["trace"] = self.trace
        if self.shift is not None:
            out["observed_shift"], out["central_shift"] = self.shift.observed, self.shift.central
            if self.shift.aa_floor is not None:
                out["aa_floor"] = self.shift.aa_floor
            out["shift"] = self.shift.verdict
        return out


@dataclass(frozen=True)
class Cell:
    """One preset x kernel (or gated setting): its judged rows (case name -> Row) with what was
    collected, or `missing`, why it has none."""
    missing: str | None = None
    collected: Collected | None = None
    rows: dict = field(default_factory=dict)
    note: RunNote = RunNote()

    def to_json(self):
        if self.missing is not None:
            return {"missing": self.missing}
        c = self.collected
        return {"pairs": list(c.pairs), "round_trips": list(c.round_trips), "replay": c.replay,
                "changes": c.changes, "confusion": c.confusion,
                "rows": {n: r.to_json() for n, r in self.rows.items()}}


@dataclass(frozen=True)
class CaseVerdict:
    """One case of `wakebench compare`'s run-level comparison, as compare judged it: its verdict
    (None: not tested), the change in percent (+ = better), the level the verdict rests on (runs,
    or repetitions where fewer than 2 runs a side held the case) and the runs a side that held
    it; for an UNKNOWN, compare's advice: `needed` runs a side (or repetitions, at the
    repetition level) of `needed_per_run` repetitions would show `needed_for`."""
    case: str
    verdict: str | None
    change_pct: float | None
    level: str | None
    runs: tuple
    needed: int | None = None
    needed_per_run: int | None = None
    needed_for: str | None = None

    def to_json(self):
        return {"case": self.case, "verdict": self.verdict, "change_pct": self.change_pct,
                "level": self.level, "runs": list(self.runs), "needed": self.needed,
                "needed_per_run": self.needed_per_run, "needed_for": self.needed_for}


@dataclass(frozen=True)
class RunsVerdict:
    """Two kernels' alternated runs on one preset: the kernels (A the baseline, B), the runs a
    side asked for and those that came back, whether their timings are EMULATED (TCG), and
    either compare's verdict (its command, its counts, its cases, its warnings) or `missing`,
    why it was not judged."""
    kernels: tuple
    asked: int
    came_back: tuple
    emulated: bool = False
    missing: str | None = None
    command: tuple = ()
    counts: dict = field(default_factory=dict)
    cases: tuple = ()
    warnings: tuple = ()

    def to_json(self):
        out = {"kernels": list(self.kernels), "asked": self.asked,
               "came_back": list(self.came_back), "emulated": self.emulated}
        if self.missing is not None:
            return dict(out, missing=self.missing)
        return dict(out, command=list(self.command), counts=self.counts,
                    cases=[c.to_json() for c in self.cases], warnings=list(self.warnings))


@dataclass(frozen=True)
class Matrix:
    """The whole matrix: kernels asked for and the table's columns, cells (preset -> column ->
    Cell), each kernel's build metadata, each preset's cases record (cases.provenance and what ran
    it), the gated kernel's fidelity ((preset, policy, result) each), the --aa run and the
    confusion summaries per column, and with --runs each preset's RunsVerdict."""
    kernels: tuple
    columns: tuple
    cells: dict
    kernel_meta: dict = field(default_factory=dict)
    cases: dict = field(default_factory=dict)
    fidelity: tuple = ()
    aa: str | None = None
    confusion: dict = field(default_factory=dict)
    runs: dict = field(default_factory=dict)

    def to_json(self):
        out = {"kernels": list(self.kernels), "columns": list(self.columns),
               "cells": {p: {k: c.to_json() for k, c in pk.items()}
                         for p, pk in self.cells.items()},
               "kernel_meta": self.kernel_meta, "cases": self.cases,
               "fidelity": [list(f) for f in self.fidelity]}
        if self.aa is not None:
            out["aa"] = self.aa
        out["confusion"] = self.confusion
        if self.runs:
            out["runs"] = {p: v.to_json() for p, v in self.runs.items()}
        return out


def every_row(matrix):
    """(preset, column, case name, Row) of every judged row, in table order."""
    return [(p, k, n, r) for p, pk in matrix.cells.items() for k, cell in pk.items()
            for n, r in cell.rows.items()]


def confusion_rows(matrix):
    """Per column: (preset, confusion row) of each of its cells."""
    return {k: [(p, r) for p, pk in matrix.cells.items()
                for r in (pk[k].collected.confusion.get("rows", [])
                          if k in pk and pk[k].collected else [])]
            for k in matrix.columns}
