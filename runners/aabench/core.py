"""Pure functions of the A/A and power benchmark: counting compare's verdicts, the goals.

Nothing here runs wakebench; aabench/__main__.py does, and tests/aa/test_aabench.py tests these.
The shifts (work_ns, the measured shift, the class shares) are in aabench/shifts.py. Files are read
by the input rules (docs/result-set.md#input-rules: runners/lab/wblab/inputs.py) and result sets by
the lab's reader (runners/lab/wblab/resultset.py), as integrations/samples.py reads them.
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "lab"))
from wblab import LabError, inputs, resultset  # noqa: E402  (found through the path above)

VERDICTS = ("DIFFERENT", "SAME", "UNKNOWN")

# The goals (docs/aa-benchmark.md#aa-benchmark-of-compare).
MAX_AA_DIFFERENT = 1       # A/A: at most this many cases DIFFERENT in a pair ...
MIN_CLEAN_SHARE = 0.90     # ... in at least this share of the pairs (9 of 10)
MIN_AA_SAME = 0.80         # --until-decided A/A: this share of the cases ends SAME
MAX_SHIFT_SAME = 0.05      # a 10 % shift: at most this share of the cases called SAME
MIN_SHIFT_DIFFERENT = 0.90  # --until-decided, 10 % shift: DIFFERENT (slower) in this share ...
DECIDE_WITHIN_S = 300.0    # ... within this many seconds


# Bad input (a missing file, another schema): main prints it as one line, exit 2. The lab's one
# error type, so that what its reader refuses is refused here alike.
InputError = LabError


def load_json(path, what="file"):
    """The JSON document in `path` (a config), by the input rules."""
    return inputs.load_json(path, what)


def load_set(path):
    """The document of the wakebench result set in `path`, read by the lab's reader: the input
    rules, the schema and the C++ reader's names and text."""
    return resultset.load(path).doc


def check_compare(doc, where="compare output"):
    """Raises InputError unless `doc` is `wakebench compare --format json` schema_version 2 of two
    sets (the verdicts' schema)."""
    if not isinstance(doc, dict) or doc.get("schema") != "wakebench-compare":
        schema = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise InputError(f"{where}: not a wakebench-compare document (schema {schema!r})")
    if doc.get("schema_version") != 2:
        raise InputError(f"{where}: wakebench-compare schema_version {doc.get('schema_version')!r}"
                         ", this benchmark reads 2 (the verdicts)")
    if not isinstance(doc.get("rows"), list):
        raise InputError(f"{where}: no rows")
    return doc


def row_ident(row):
    """A compare row's case as mechanism/mode/placement[/pairN], without its knobs."""
    return f"{row['mechanism']}/{row['mode']}/{row['placement']}{row.get('pair') or ''}"


def case_verdicts(doc):
    """{row ident: {"verdict", "change_pct", "key", "needed", "needed_for", "per_run"}} of the
    second set of compare's JSON, for each case both sets tested (verdict not null). needed,
    needed_for, per_run: an UNKNOWN case's advice (at the run level, runs a side of per_run
    repetitions each; None when none)."""
    check_compare(doc)
    out = {}
    for row in doc["rows"]:
        cells = row.get("cells") or []
        if len(cells) < 2 or cells[1].get("verdict") is None:
            continue
        c = cells[1]
        out[row_ident(row)] = {"verdict": c["verdict"], "change_pct": c.get("change_pct"),
                               "key": row.get("key"), "needed": c.get("needed"),
                               "needed_for": c.get("needed_for"),
                               "per_run": c.get("needed_repetitions_per_run")}
    return out


def until_decided_verdicts(set_doc, where="result set"):
    """The same from a result set's `until_decided` (wakebench run --until-decided): {ident:
    {"verdict", "change_pct", "look", "repetitions"}} and the looks' summary."""
    ud = set_doc.get("until_decided") if isinstance(set_doc, dict) else None
    if not isinstance(ud, dict) or not isinstance(ud.get("cases"), dict):
        raise InputError(f"{where}: no until_decided (not a run with --until-decided)")
    out = {}
    for key, v in ud["cases"].items():
        out[key.split(" ", 1)[0]] = {"verdict": v.get("verdict"), "change_pct": v.get("change_pct"),
                                     "look": v.get("look"), "repetitions": v.get("repetitions")}
    return out


def counts_mismatch(set_doc, verdicts):
    """"" when the until_decided counts the run wrote agree with its cases, else a line saying
    how they differ (the run's own summary against its verdicts)."""
    written = (set_doc.get("until_decided") or {}).get("counts") or {}
    mine = count(verdicts)
    diff = [f"{k} {written.get(k)} vs {mine[k]}" for k in VERDICTS if written.get(k) != mine[k]]
    return ("until_decided counts differ from its cases: " + ", ".join(diff)) if diff else ""


def decide_times(cases):
    """'median X s, max Y s' over the decided cases' decided_s, '-' when none."""
    t = sorted(c["decided_s"] for c in cases if c.get("decided_s") is not None)
    if not t:
        return "none decided"
    mid = t[len(t) // 2] if len(t) % 2 else (t[len(t) // 2 - 1] + t[len(t) // 2]) / 2
    return f"{len(t)} decided after median {mid:.0f} s, max {t[-1]:.0f} s"


def count(verdicts, idents=None):
    """{"DIFFERENT", "slower", "SAME", "UNKNOWN", "cases"} over `verdicts` (case_verdicts or
    until_decided_verdicts), restricted to `idents` when given. slower: DIFFERENT with a negative
    change (+ = better)."""
    n = {"DIFFERENT": 0, "slower": 0, "SAME": 0, "UNKNOWN": 0, "cases": 0}
    for ident, v in verdicts.items():
        if idents is not None and ident not in idents:
            continue
        if v["verdict"] not in VERDICTS:
            continue
        n["cases"] += 1
        n[v["verdict"]] += 1
        if v["verdict"] == "DIFFERENT" and (v.get("change_pct") or 0.0) < 0:
            n["slower"] += 1
    return n


def with_repetitions(run_args, n):
    """run_args with --benchmark_repetitions set to n (any given one replaced); n None: as is."""
    if n is None:
        return list(run_args)
    out, skip = [], False
    for a in run_args:
        if skip:
            skip = False
        elif a == "--benchmark_repetitions":
            skip = True
        elif not a.startswith("--benchmark_repetitions="):
            out.append(a)
    return out + ["--benchmark_repetitions", str(n)]


LOOK_LINE = re.compile(r"look (\d+) of \d+ .*; (\d+):(\d\d) of \S+ spent")


def look_times(log_text):
    """{look: seconds spent when it was taken} from a --until-decided run's stderr."""
    return {int(m.group(1)): 60 * int(m.group(2)) + int(m.group(3))
            for m in LOOK_LINE.finditer(log_text)}


# --- goals: each returns (line, met); no data is never met ------------------------------------

def ratio(s, n):
    return s / n if n else 0.0


def share(s, n):
    return f"{s}/{n} {ratio(s, n):.0%}" if n else "0/0"


def met_text(ok):
    return "met" if ok else "NOT met"


def aa_goal(pairs, label="A/A"):
    """`pairs`: one count() per A/A pair. At most MAX_AA_DIFFERENT case DIFFERENT in at least
    MIN_CLEAN_SHARE of the pairs."""
    clean = sum(1 for p in pairs if p["DIFFERENT"] <= MAX_AA_DIFFERENT)
    ok = bool(pairs) and clean >= MIN_CLEAN_SHARE * len(pairs) - 1e-9
    return (f"{label}: {clean} of {len(pairs)} pairs have <= {MAX_AA_DIFFERENT} case DIFFERENT; "
            f"goal >= {MIN_CLEAN_SHARE:.0%} of the pairs: {met_text(ok)}"), ok


def total(counts):
    out = {"DIFFERENT": 0, "slower": 0, "SAME": 0, "UNKNOWN": 0, "cases": 0}
    for c in counts:
        for k in out:
            out[k] += c[k]
    return out


def aa_same_goal(pairs, label="A/A until decided"):
    """At least MIN_AA_SAME of all A/A cases end SAME."""
    t = total(pairs)
    ok = t["cases"] > 0 and t["SAME"] >= MIN_AA_SAME * t["cases"] - 1e-9
    return (f"{label}: {share(t['SAME'], t['cases'])} of the cases SAME; goal >= "
            f"{MIN_AA_SAME:.0%}: {met_text(ok)}"), ok


def shift_same_goal(counts, label="10% shift"):
    """A 10 % shift: at most MAX_SHIFT_SAME of its cases called SAME."""
    t = total(counts)
    ok = t["cases"] > 0 and t["SAME"] <= MAX_SHIFT_SAME * t["cases"] + 1e-9
    return (f"{label}: {share(t['SAME'], t['cases'])} of the cases SAME, "
            f"{share(t['slower'], t['cases'])} DIFFERENT slower; goal SAME <= "
            f"{MAX_SHIFT_SAME:.0%}: {met_text(ok)}"), ok


def shift_decided_goal(cases, label="10% shift until decided"):
    """`cases`: [{"verdict", "change_pct", "decided_s"}] of the 10 % shift cases under
    --until-decided. At least MIN_SHIFT_DIFFERENT of them DIFFERENT and slower within
    DECIDE_WITHIN_S seconds."""
    hit = sum(1 for c in cases if c["verdict"] == "DIFFERENT" and (c.get("change_pct") or 0) < 0
              and c.get("decided_s") is not None and c["decided_s"] <= DECIDE_WITHIN_S)
    ok = bool(cases) and hit >= MIN_SHIFT_DIFFERENT * len(cases) - 1e-9
    return (f"{label}: {share(hit, len(cases))} DIFFERENT slower within "
            f"{DECIDE_WITHIN_S:.0f} s; goal >= {MIN_SHIFT_DIFFERENT:.0%}: {met_text(ok)}"), ok


def pair_table(pairs, head="pair"):
    """One line per pair of count()s."""
    lines = [f"{head:>4}  cases  DIFFERENT  slower  SAME  UNKNOWN"]
    for i, p in enumerate(pairs, 1):
        lines.append(f"{i:>4}  {p['cases']:>5}  {p['DIFFERENT']:>9}  {p['slower']:>6}  "
                     f"{p['SAME']:>4}  {p['UNKNOWN']:>7}")
    return lines
