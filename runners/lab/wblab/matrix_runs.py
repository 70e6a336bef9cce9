"""The run as a level in the lab (`matrix --runs K`): two kernels' guests alternated on each preset,
A, B, A, B ... K each, so that whatever drifts between runs falls on both alike, and their A/B
verdict from `wakebench compare A1 .. AK -- B1 .. BK`, the one judge (analysis/stats/levels.h: with
two or more runs a side the run is the unit and the variance between runs, measured, replaces the
A/A floor). The lab reads compare's verdicts into matrix_cells.RunsVerdict; it never judges them
itself, and it does not call compare when a side has fewer runs than asked: it says so."""
import json
from pathlib import Path

from . import LabError, resultset, write_atomic
from .agreement import run_json
from .fidelity import GATED
from .matrix_cells import CaseVerdict, RunsVerdict
from .matrix_collect import other_config

COMPARE_FILE = "compare-runs.json"  # compare's document, in <out>/<preset>/


def check_runs(runs, kernels):
    """LabError in one line unless `runs` is 1, or 2 or more of exactly two per-patch kernels."""
    if runs < 1:
        raise LabError(f"--runs: {runs} is not a positive count")
    if runs == 1:
        return
    if len(kernels) != 2 or len(set(kernels)) != 2:
        raise LabError(f"--runs {runs}: alternates the guests of two kernels (--kernels A,B), "
                       f"not {len(kernels)} ({','.join(kernels)})")
    if GATED in kernels:
        raise LabError(f"--runs {runs}: {GATED} switches its settings inside one guest (--ab); "
                       "alternate two per-patch kernels")


def run_dir(cell, i):
    """Where run `i` (1-based) of one kernel on one preset goes: the cell's own folder for the
    first (the run the tables hold), <cell>/run<i>/ for the others."""
    return Path(cell) if i == 1 else Path(cell) / f"run{i}"


def guest_order(kernels, presets, runs):
    """[(preset, kernel, run)] in the order the guests boot. One run: kernel by kernel, every
    preset on each. Several: preset by preset, the two kernels alternated run by run
    (A1 B1 A2 B2 ...), so that a preset's runs end together and drift falls on both sides."""
    if runs == 1:
        return [(p, k, 1) for k in kernels for p in presets]
    return [(p, k, i) for p in presets for i in range(1, runs + 1) for k in kernels]


def compare_command(wakebench, a_sets, b_sets):
    """`wakebench compare` of A's runs against B's: A the baseline, before the `--`."""
    return [str(wakebench), "compare", "--format", "json", *map(str, a_sets), "--",
            *map(str, b_sets)]


def missing_run(guest):
    """Why a run's guest brought no result set back: not run, or its first problem."""
    if not guest.is_dir():
        return "not run"
    summary = guest / "lab-summary.json"
    problems = json.loads(summary.read_text()).get("problems") if summary.is_file() else None
    return problems[0] if problems else "no results.json"


def side_runs(cell, kernel, runs, record):
    """(the result sets of `kernel`'s runs that count, [(run, why) of those that do not], whether
    one of them has EMULATED timings)."""
    sets, gaps, emulated = [], [], False
    for i in range(1, runs + 1):
        guest = run_dir(cell, i)
        path = guest / "results.json"
        if not path.is_file():
            gaps.append((i, missing_run(guest)))
            continue
        env = resultset.load(path).environment
        emulated = emulated or env.get("emulated") is True
        ran = (env.get("lab_kernel") or {}).get("policy", kernel)
        why = other_config(record, env, str(guest)) or \
            (f"ran policy {ran}, not {kernel}" if ran != kernel else None)
        if why:
            gaps.append((i, why))
        else:
            sets.append(path)
    return sets, gaps, emulated


def shortfall(kernel, asked, got, gaps):
    """The line that says a side has fewer runs than asked, naming each missing run."""
    runs = "; ".join(f"run {i}: {why}" for i, why in gaps)
    return f"{kernel} has {got} of the {asked} runs asked for ({runs})"


def param_text(value):
    """A parameter's value as case names write it: "0,1" for a list, compact JSON otherwise."""
    if isinstance(value, list) and all(isinstance(v, (int, float, str)) for v in value):
        return ",".join(map(str, value))
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def case_names(rows):
    """Each compare row's case as mechanism/mode/placement (compare's key before its
    parameters), with /name=value for each parameter that differs between the rows that would
    otherwise read the same (the lab's searched cases differ by their start CPUs alone)."""
    short = [r["key"].split(" ", 1)[0] for r in rows]
    names = []
    for s, r in zip(short, rows):
        same = [o.get("params") or {} for t, o in zip(short, rows) if t == s]
        mine = r.get("params") or {}
        varying = [k for k in mine if any(p.get(k) != mine[k] for p in same)]
        names.append(s + "".join(f"/{k}={param_text(mine[k])}" for k in varying))
    return names


def read_compare(doc, where):
    """(counts, cases, warnings) of compare's JSON of two sides, as compare judged them;
    LabError in one line when it is not that document."""
    if not isinstance(doc, dict) or doc.get("schema") != "wakebench-compare" or \
            doc.get("schema_version") != 2 or not isinstance(doc.get("rows"), list) or \
            len(doc.get("summary") or []) != 1:
        raise LabError(f"{where}: not wakebench compare's JSON (schema_version 2) of two sides")
    cases = []
    for name, row in zip(case_names(doc["rows"]), doc["rows"]):
        a, b = row["cells"][0], row["cells"][1]
        cases.append(CaseVerdict(name, b.get("verdict"), b.get("change_pct"), b.get("level"),
                                 (a.get("runs", 0), b.get("runs", 0)), b.get("needed"),
                                 b.get("needed_repetitions_per_run"), b.get("needed_for")))
    counts = {k: v for k, v in doc["summary"][0].items() if k != "set"}
    return counts, tuple(cases), tuple(doc.get("warnings") or ())


def runs_verdict(wakebench, preset_dir, kernels, runs, record):
    """The RunsVerdict of `kernels` (A, B) on one preset (`preset_dir`: <out>/<preset>; `record`:
    its cases' case_set_record): compare over both sides' runs, its document saved beside them, or
    why it was not judged (a side short of runs, compare failing)."""
    sides = [side_runs(Path(preset_dir) / k, k, runs, record) for k in kernels]
    head = {"kernels": tuple(kernels), "asked": runs,
            "came_back": tuple(len(sets) for sets, _, _ in sides),
            "emulated": any(e for _, _, e in sides)}
    short = [shortfall(k, runs, n, gaps)
             for k, n, (_, gaps, _) in zip(kernels, head["came_back"], sides) if n < runs]
    saved = Path(preset_dir) / COMPARE_FILE
    saved.unlink(missing_ok=True)  # an earlier verdict is not this one's
    if short:
        return RunsVerdict(**head, missing="; ".join(short) + ": not judged")
    cmd = compare_command(wakebench, sides[0][0], sides[1][0])
    doc, msg = run_json(cmd)
    if doc is None:
        return RunsVerdict(**head, command=tuple(cmd), missing=f"wakebench compare failed: {msg}")
    counts, cases, warnings = read_compare(doc, "wakebench compare")
    write_atomic(saved, json.dumps(doc, indent=1) + "\n")
    return RunsVerdict(**head, command=tuple(cmd), counts=counts, cases=cases,
                       warnings=warnings)
