"""What the matrix reads back from the guests, each cell once into a matrix_cells.Cell (Collected,
or why it is missing): the agreement recomputed with the current wakebench, its replay, confusion
rows and observed class shares; a gated guest's settings labelled into cells of their own."""
import hashlib
import json
import types
from pathlib import Path

from . import LabError, write_atomic
from . import changes, confusion, predictions, replay, resultset
from .agreement import agreement, check_thresholds
from .fidelity import GATED, class_shares, read_back_problems, settings
from .guest import label_results
from .matrix_cells import Cell, Collected, RunNote


def observed_classes(results):
    """Per case name of a result set (resultset.ResultSet): the share of round trips in each
    placement class. LabError in one line for a negative count."""
    out = {}
    for i, c in enumerate(results.cases):
        if any(v < 0 for v in c.histogram.values()):
            raise LabError(f"{results.where}: cases[{i}] has a negative count in "
                           "observed.histogram")
        if shares := class_shares(c.histogram):
            out[c.name] = shares
    return out


def cases_ran(record, notes):
    """`record` with the wakebench commits and the first start time of the cells' runs."""
    shas, first = [], None
    for note in notes:
        if note.git_sha and note.git_sha not in shas:
            shas.append(note.git_sha)
        when = note.captured_at
        if isinstance(when, str) and (first is None or when < first):
            first = when
    return dict(record, wakebench=shas, first_run=first)


def other_config(record, env, where):
    """The reason a cell does not count when it ran another config than the record's, or None."""
    ran_hash = str(env.get("config_hash", "")).removeprefix("sha256:")
    if ran_hash != record["sha256"]:
        return (f"{where} ran another config (sha256 {ran_hash[:16] or 'unknown'}), not "
                f"{record['shown']}: --rerun runs it")
    return None


def discriminating(pred):
    """The case names whose predictions (typed) discriminate some pair of policies, or None when
    the predictions carry no `discriminates` (a wakebench before it)."""
    entries = [e for e in pred.cases if e.measured]
    if any(e.discriminates is None for e in entries):
        return None
    return tuple(e.case for e in entries if e.discriminates)


def collect(wakebench, record, cell, policy, kernel=None):
    """The Cell of one guest's results.json, its agreement recomputed with the current model
    (`record`: the preset's cases.case_set_record)."""
    kernel = kernel or policy
    results = cell / "results.json"
    if not results.is_file():
        return Cell("not run" if not cell.exists() else "no results (see lab-summary.json)")
    data = resultset.load(results)
    info = data.environment.get("lab_kernel") or {}
    if info.get("policy", kernel) != kernel:
        raise LabError(f"{results}: ran policy {info.get('policy')}, not {kernel}")
    env = data.environment
    note = RunNote((env.get("wakebench") or {}).get("git_sha"), env.get("captured_at"))
    other = other_config(record, env, str(cell))
    if other:
        return Cell(other, note=note)
    note = RunNote(note.git_sha, note.captured_at, kernel, {
        k: v for k, v in info.items() if k not in ("setting", "features_on")})
    rep = agreement(wakebench, results, cell, policy)
    if "unavailable" in rep:
        return Cell(rep["unavailable"], note=note)
    pred = predictions.load(cell / "predict.json")
    check_thresholds(pred, cell / "predict.json")
    ok = {c.name for c in data.cases if c.ok}
    return Cell(collected=Collected(
        report=json.loads((cell / "agreement.json").read_text()),
        pairs=tuple(sorted({len(c.repetitions) for c in data.cases if c.kernel})),
        round_trips=tuple(sorted({sum(r.classes.values()) for c in data.cases if c.kernel
                                  for r in c.repetitions if r.classes})),
        replay=replay.cell_replay(wakebench, results, policy),
        traces={c.name: c.trace for c in data.cases if c.trace and c.trace.counted},
        confusion=confusion.cell_confusion(pred, data, policy),
        observed={n: v for n, v in observed_classes(data).items() if n in ok},
        discriminating=discriminating(pred),
        changes=changes.cell_changes(wakebench, results, expect=policy)), note=note)


def collect_gated(wakebench, record, guest, policy):
    """One setting of the gated guest: its result set (`results-ab<k>.json`) labelled into
    <guest>/<policy>/results.json, failed unless every repetition read back the intended feature
    state, then collected like any cell against `policy`'s model."""
    k = [p for p, _ in settings()].index(policy)
    src = guest / f"results-ab{k}.json"
    if not src.is_file():
        return Cell("not run" if not guest.exists() else
                    f"no {src.name} (see {guest}/lab-summary.json)")
    data = resultset.load(src)
    problems = read_back_problems(data, k)
    if problems:
        return Cell("the feature read-back: " + "; ".join(problems[:3]))
    summary = json.loads((guest / "lab-summary.json").read_text())
    plan = types.SimpleNamespace(kernel=summary.get("kernel"), name=summary.get("name"),
                                 accel=summary.get("accel", "tcg"),
                                 lab_kernel=dict(summary.get("lab_kernel") or {}, setting=k,
                                                 features_on=policy))
    label_results(data.doc, summary.get("qemu_command") or [], plan,
                  summary.get("qemu_version"))
    (guest / policy).mkdir(exist_ok=True)
    side = guest / f"results-ab{k}.decisions.txt"  # the name the set gives it
    if side.is_file():
        write_atomic(guest / policy / side.name, side.read_text())
    write_atomic(guest / policy / "results.json", json.dumps(data.doc, indent=1) + "\n")
    return collect(wakebench, record, guest / policy, policy, GATED)


def topology_order(out):
    """The class order (nearest first) from any cell's `wakebench topology --json` output."""
    for t in sorted(Path(out).glob("*/*/topology.json")):
        classes = json.loads(t.read_text()).get("classes", [])
        if classes:
            return [c["class"] for c in classes]
    raise LabError(f"{out}: no cell has a topology.json (no guest came back)")


def aa_observed(aa_dir, preset, config):
    """Mainline's observed class shares in the other run of the matrix, which must have run the
    same cases file (LabError in one line)."""
    path = Path(aa_dir) / preset / "mainline" / "results.json"
    if not path.is_file():
        raise LabError(f"--aa {aa_dir}: no {preset}/mainline/results.json (another run "
                       "of the matrix over the same presets)")
    results = resultset.load(path)
    observed = observed_classes(results)
    ran = str(results.environment.get("config_hash", "")).removeprefix("sha256:")
    if ran and ran != hashlib.sha256(Path(config).read_bytes()).hexdigest():
        raise LabError(f"--aa {aa_dir}: {preset}/mainline ran another config than {config} "
                       f"(sha256 {ran[:16]})")
    return observed
