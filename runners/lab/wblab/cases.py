"""The matrix's case files: `--cases FILE` or `--cases PRESET=FILE` runs a
wakebench run config of anyone's choosing instead of configs/lab/<preset>.json, and the matrix
records which file ran, its sha256, whether it is committed in git unchanged (and when), and the
wakebench commit the guests ran, so a reader sees the cases were fixed before the guests ran."""
import datetime
import hashlib
import subprocess
import textwrap
from pathlib import Path

from . import REPO, LabError, inputs
from .registry import BLOCKING_MECHANISMS


def parse_cases(values, presets):
    """--cases values -> {preset: Path} for every preset (configs/lab/<preset>.json where none is
    given). FILE applies to every preset, PRESET=FILE to one; each must be a run config."""
    chosen = {}
    for v in values:
        head, sep, tail = v.partition("=")
        targets, path = ([head], tail) if sep and head in presets else (presets, v)
        for p in targets:
            chosen[p] = Path(path)
    out = {p: chosen.get(p, REPO / f"configs/lab/{p}.json") for p in presets}
    for p, path in out.items():
        check_config(path, f"--cases {path}" if p in chosen else str(path))
    return out


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
