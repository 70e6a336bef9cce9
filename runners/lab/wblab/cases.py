"""The matrix's case files: `--cases FILE` or `--cases PRESET=FILE` runs a
wakebench run config of anyone's choosing instead of configs/lab/<preset>.json, and the matrix
records which file ran, its sha256, whether it is committed in git unchanged (and when), and the
wakebench commit the guests ran, so a reader sees the cases were fixed before the guests ran.
A patch or tree kernel's default is the union of the preset's searched and loaded cases
(patch_sources()), written into the matrix's folder and recorded by its committed sources."""
import dataclasses
import datetime
import hashlib
import json
import subprocess
import textwrap
from pathlib import Path

from . import REPO, LabError, inputs, write_atomic
from .qemu import PRESETS
from .registry import BLOCKING_MECHANISMS


@dataclasses.dataclass(frozen=True)
class CaseSet:
    """The run config a preset's guests run (`path`) and the committed files it was made of
    (`sources`: the file itself, or those a union was written from)."""
    path: Path
    sources: tuple


def parse_cases(values, presets, user_kernels=False, out=None):
    """--cases values -> {preset: CaseSet} for every preset. FILE applies to every preset,
    PRESET=FILE to one; each must be a run config. Where none is given: with a patch or tree
    kernel (`user_kernels`) the union of patch_sources(), written to out/<preset>/cases.json,
    else the preset's suite, configs/lab/<preset>.json."""
    chosen = {}
    for v in values:
        head, sep, tail = v.partition("=")
        targets, path = ([head], tail) if sep and head in presets else (presets, v)
        for p in targets:
            chosen[p] = Path(path)
    sets = {}
    for p in presets:
        if p in chosen:
            check_config(chosen[p], f"--cases {chosen[p]}")
            sets[p] = CaseSet(chosen[p], (chosen[p],))
            continue
        sources = patch_sources(p) if user_kernels else []
        sources = sources or [REPO / f"configs/lab/{p}.json"]
        docs = [check_config(s, str(s)) for s in sources]
        path = sources[0] if len(sources) == 1 else \
            write_union(p, sources, docs, Path(out) / p / "cases.json")
        sets[p] = CaseSet(path, tuple(sources))
    return sets


def patch_sources(preset):
    """The case files a patch or tree kernel runs on `preset` by default (issue 54, item 2), those
    that exist: its searched cases (configs/lab/search/<preset>.json: where the models part) and
    the loaded cases scaled to its CPU count (configs/lab/loads-<n>cpu.json: where the hooks act,
    since a lone pair on an idle guest rarely meets the state a placement patch changes)."""
    cpus = int(PRESETS[preset]["smp"].split(",")[0])
    files = [REPO / f"configs/lab/search/{preset}.json", REPO / f"configs/lab/loads-{cpus}cpu.json"]
    return [f for f in files if f.is_file()]


def write_union(preset, sources, docs, path):
    """Writes one run config with every case of `docs` (read from `sources`), each carrying its
    file's run defaults unless it sets its own; a case two files share runs once. Returns path."""
    cases, claims = [], []
    for doc in docs:
        for c in doc["cases"]:
            case = dict(doc.get("defaults") or {}, **c)
            if case not in cases:
                cases.append(case)
        claims += doc.get("claims") or []
    shown = " and ".join(shown_path(s) for s in sources)
    union = {"schema_version": 1, "name": f"{preset}-patch-default",
             "description": f"A patch kernel's default cases on {preset}: every case of {shown}, "
                            "each with its file's run defaults (written by wakebench-lab matrix)",
             "cases": cases}
    if claims:
        union["claims"] = claims
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(union, indent=1) + "\n")
    return path


def shown_path(path):
    """`path` relative to the repository where it lies inside it."""
    path = Path(path).resolve()
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def check_config(path, what):
    """LabError in one line unless `path` is a wakebench run config with at least one
    kernel-placed case of a blocking mechanism (the only cases the matrix runs)."""
    doc = inputs.load_json(path, "JSON config", where=what)  # the input rules: one line
    entries = doc.get("cases") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not entries or \
            not all(isinstance(c, dict) for c in entries):
        raise LabError(f"{what}: not a wakebench run config (no \"cases\" list of objects)")
    for c in entries:
        mechs, places = c.get("mechanisms") or [], c.get("placements") or []
        if not isinstance(mechs, list) or not isinstance(places, list):
            raise LabError(f"{what}: a case's mechanisms and placements must be lists")
        if any(m in BLOCKING_MECHANISMS for m in mechs) and \
                any(isinstance(p, str) and p.startswith("kernel") for p in places):
            return doc
    raise LabError(f"{what}: no kernel-placed case of a blocking mechanism (nothing the "
                   "matrix runs)")


def git(path, *args):
    """(exit status, stdout) of git in `path`'s folder."""
    p = subprocess.run(["git", "-C", str(Path(path).resolve().parent), *args],
                       capture_output=True, text=True)
    return p.returncode, p.stdout.strip()


def case_set_record(cases):
    """What matrix.json says of a preset's CaseSet before any cell is read: the file that ran
    (path as shown, sha256) and the git state of its sources: the latest commit when every one is
    committed unchanged, else the first that is not."""
    recs = [provenance(s) for s in cases.sources]
    short = [r for r in recs if not (r["git"]["committed"] and r["git"]["unchanged"])]
    git = short[0]["git"] if short else max((r["git"] for r in recs),
                                            key=lambda g: utc(g["committed_at"]))
    ran = provenance(cases.path)
    return dict(ran, git=git, shown=" + ".join(shown_path(s) for s in cases.sources))


def provenance(path):
    """`path`'s sha256 and git state: {"commit", "committed_at", "unchanged"} of its last commit,
    or {"committed": false, "why"} when git does not track it."""
    path = Path(path).resolve()
    rec = {"path": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    rc, _ = git(path, "ls-files", "--error-unmatch", "--", path.name)
    if rc != 0:
        return dict(rec, git={"committed": False, "why": "not tracked by git"})
    _, last = git(path, "log", "-1", "--format=%H %cI", "--", path.name)
    if not last:
        return dict(rec, git={"committed": False, "why": "added but never committed"})
    commit, when = last.split()
    rc, _ = git(path, "diff", "--quiet", "HEAD", "--", path.name)
    return dict(rec, git={"committed": True, "commit": commit, "committed_at": when,
                          "unchanged": rc == 0})


def utc(text):
    """An ISO time (git's %cI, a result set's captured_at) as aware UTC, or None."""
    try:
        t = datetime.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return t.astimezone(datetime.timezone.utc) if t.tzinfo else None


def provenance_lines(preset, rec):
    """The lines of the rendering: verdict first (committed unchanged before the guests ran, or
    what falls short), then the file, its hash and the wakebench the guests ran."""
    g = rec["git"]
    first = utc(rec.get("first_run"))
    if not g.get("committed"):
        word = f"NOT COMMITTED ({g['why']})"
    elif not g["unchanged"]:
        word = f"CHANGED since its commit {g['commit'][:12]}"
    elif first is None or utc(g["committed_at"]) is None:
        word = f"committed unchanged in {g['commit'][:12]}, run time unknown"
    elif utc(g["committed_at"]) <= first:
        word = f"committed unchanged in {g['commit'][:12]} before the guests ran"
    else:
        word = f"COMMITTED AFTER the guests ran ({g['commit'][:12]})"
    shas = ", ".join(rec.get("wakebench") or []) or "unknown"
    detail = (f"{rec['shown']} sha256 {rec['sha256'][:16]}"
              + (f", committed {utc(g['committed_at']):%Y-%m-%d %H:%M} UTC"
                 if g.get("committed") and utc(g["committed_at"]) else "")
              + (f", guests from {first:%Y-%m-%d %H:%M} UTC" if first else "")
              + f"; the guests' wakebench {shas}")
    return textwrap.wrap(f"- {word}: {preset}: {detail}", 100, subsequent_indent="  ",
                         break_long_words=False, break_on_hyphens=False)
