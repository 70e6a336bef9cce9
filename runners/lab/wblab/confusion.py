"""The kernel named from its placements: per case that discriminates the running
kernel's policy from another lab kernel's, the policy groups of `wakebench predict --results`
ranked by strict distance (groups with one steady state taken as one: by_steady); a hit is
strictly nearer, by at least MARGIN, to the running kernel's group than to every other group (ties
are misses). Controls (cases that discriminate nothing) and
NO-PREDICTION cells are reported apart. Pure functions: the model's figures (`groups`,
`discriminates`) are wakebench's own, never recomputed here."""
import textwrap
from dataclasses import replace

from .kernel import KERNEL_POLICIES

MARGIN = 0.05  # strict TV by which the running kernel's group must be nearer than every other
MIN_CASES = 6  # fewer counted cases: "not tested"
GOAL = 0.9  # hits per kernel
EPS = 1e-9  # the predictor's distances have three decimals
# The kinds of a case, in the order they are decided.
KINDS = ("hit", "miss", "control", "other-pairs", "no-prediction", "unknown")


def pair_set(pairs):
    return {tuple(p) for p in pairs or []}


def counts_for(pairs, policy, lab=KERNEL_POLICIES):
    """Whether a case whose `discriminates` is `pairs` counts for the kernel running `policy`: some
    pair holds `policy` and another lab kernel's policy."""
    return any(policy in p and any(q != policy and q in lab for q in p) for p in pairs)


def ranked(groups):
    """The groups (predictions.Group) with a strict distance, nearest first."""
    return sorted((g for g in groups if g.distance is not None), key=strict)


def strict(group):
    return group.distance.strict


def by_steady(groups):
    """Ranked groups with the same steady state made one: predict's groups also part policies
    whose alternatives differ, but the strict distance reads the steady state alone, so two such
    groups always tie and no placement could tell them apart."""
    out = []
    for g in groups:
        i = next((i for i, m in enumerate(out) if g.classes is not None
                  and m.classes == g.classes), None)
        if i is None:
            out.append(g)
        else:
            policies = out[i].policies + g.policies
            out[i] = replace(out[i], policies=policies, name="/".join(policies))
    return out


def label(group, lab=KERNEL_POLICIES):
    """A group by the lab kernels' policies in it (its name when it holds none of them)."""
    mine = [p for p in group.policies if p in lab]
    return "/".join(mine) if mine else group.name


def nearest_label(groups, lab=KERNEL_POLICIES, margin=MARGIN):
    """The group ranked first, or "tie" when the second is within `margin` of it."""
    r = ranked(groups)
    if not r:
        return None
    if len(r) > 1 and strict(r[1]) - strict(r[0]) < margin - EPS:
        return "tie"
    return label(r[0], lab)


def judge(entry, policy, lab=KERNEL_POLICIES, margin=MARGIN):
    """One entry of predict.json (predictions.PredictionCase) held to the kernel running
    `policy`: a dict with `kind` (KINDS), `nearest` (hit: `policy`; miss: the nearest group's
    label or "tie"), the strict distances and whether its discrimination depends on emulation."""
    pairs = entry.discriminates
    row = {"case": entry.case, "mechanism": entry.mechanism}
    if pairs is None:
        return dict(row, kind="unknown", why="predict.json has no `discriminates` (a wakebench "
                    "before it)")
    native = entry.discriminates_native
    row["emulation"] = native is not None and pair_set(native) != pair_set(pairs)
    if row["emulation"]:
        row["pairs"], row["native"] = sorted(pair_set(pairs)), sorted(pair_set(native))
    if not pairs:
        return dict(row, kind="control")
    if not counts_for(pairs, policy, lab):
        return dict(row, kind="other-pairs")
    groups = ranked(entry.groups)
    own = next((g for g in groups if policy in g.policies), None)
    if own is None:
        return dict(row, kind="unknown", why=f"no ranked group holds {policy}")
    if own.verdict == "NO-PREDICTION":
        return dict(row, kind="no-prediction")
    groups = by_steady(groups)
    own = next(g for g in groups if policy in g.policies)
    d = strict(own)
    others = [g for g in groups if g is not own]
    row.update(own=d, others={g.name: strict(g) for g in others})
    if all(strict(g) - d >= margin - EPS for g in others):
        return dict(row, kind="hit", nearest=policy)
    return dict(row, kind="miss", nearest=nearest_label(groups, lab, margin))


def off_cpus(case_cpus, model_cpus):
    """Round trips each side spent on CPUs outside the model's (`observed.cpus` of a result-set
    case against the policy's predicted `cpus`)."""
    out = {}
    for side, counts in (case_cpus or {}).items():
        n = sum(v for c, v in (counts or {}).items() if int(c) not in set(model_cpus or ()))
        if n:
            out[side] = n
    return out


def miss_trace(entry, case, policy):
    """What a miss shows of its wakeups: the trace's path counts, where the moved wakes went and
    the round trips spent off the predicted CPUs; None without a trace."""
    # The result set's own trace: predict's `measured.trace` keeps only the paths and classes.
    trace = (case and case.trace) or (entry.measured and entry.measured.trace)
    if not trace or not trace.counted:
        return None
    text = "paths " + ", ".join(f"{p} {n}" for p, n in trace.paths.items())
    moved = {c: k for c, k in (trace.moved_by_class or {}).items() if k}
    text += f"; moved off the wakee's CPU {trace.moved}" + (
        " (to " + ", ".join(f"{c} {k}" for c, k in moved.items()) + ")" if moved else "")
    model = entry.policy(policy)
    model_cpus = model and model.cpus
    off = off_cpus(case and case.observed_cpus, model_cpus)
    if model_cpus is not None:
        text += f"; round trips off the predicted CPUs {list(model_cpus)}: " + (
            ", ".join(f"{s} {n}" for s, n in off.items()) if off else "none")
        text += first_moves_text(trace.first_moves, model_cpus)
    return text


def first_moves_text(moves, model_cpus, shown=4):
    """The first traced wakes (predictions.Move) that took the wakee off the predicted CPUs (""
    when the trace has no `first_moves`, a wakebench before them)."""
    if moves is None:
        return ""
    off = [m for m in moves if m.to not in set(model_cpus)]
    if not off:
        return "; no traced move left the predicted CPUs"
    return "; first wakes off them: " + ", ".join(
        f"run {m.run} wake {m.wake} {m.from_cpu}->{m.to} ({m.path})" for m in off[:shown])


def cell_confusion(pred, results, policy, lab=KERNEL_POLICIES):
    """A cell's cases (predict.json `pred` and the result set `results`, both typed) held to
    `policy`: the judged rows (a miss with its trace) and the dropped cases (a non-ok status, with
    its reason)."""
    cases = {c.name: c for c in results.cases}
    dropped = [{"case": n, "status": c.status, "reason": c.reason}
               for n, c in cases.items() if not c.ok]
    rows = []
    for e in pred.cases:
        if not e.measured or e.measured.status != "ok" or e.skipped:
            continue
        row = judge(e, policy, lab)
        if row["kind"] == "miss":
            row["trace"] = miss_trace(e, cases.get(e.case), policy)
        rows.append(row)
    return {"rows": rows, "dropped": dropped}


def summary(rows, min_cases=MIN_CASES, goal=GOAL):
    """A kernel's rows (over every preset): verdict ("goal met", "short of the goal", "not
    tested"), hits, counted cases and the cases set apart."""
    n = {k: sum(r["kind"] == k for r in rows) for k in KINDS}
    counted = n["hit"] + n["miss"]
    if counted < min_cases:
        verdict = "not tested"
    else:
        verdict = "goal met" if n["hit"] >= goal * counted - EPS else "short of the goal"
    confusion = {}
    for r in rows:
        if r["kind"] in ("hit", "miss"):
            confusion[r["nearest"]] = confusion.get(r["nearest"], 0) + 1
    return dict(n, counted=counted, verdict=verdict, confusion=confusion,
                emulation=sum(bool(r["kind"] in ("hit", "miss") and r.get("emulation"))
                                 for r in rows))


def columns(summaries, lab=KERNEL_POLICIES):
    """The confusion table's columns: the lab kernels, then other nearest groups, then "tie"."""
    seen = [c for s in summaries.values() for c in s["confusion"]]
    rest = sorted({c for c in seen if c not in lab and c != "tie"})
    return list(lab) + rest + (["tie"] if "tie" in seen else [])


def render(summaries, per_row, lab=KERNEL_POLICIES):
    """The confusion section: how it is read, the table (one row per running kernel) and every
    miss with its trace (or as unexplained), the dropped cases and the rows that depend on
    emulation. `summaries`: row label -> summary(); `per_row`: row label -> [(preset, row)]."""
    cols = columns(summaries, lab)
    lines = ["#### The kernel named from its placements", ""]
    lines += textwrap.wrap(
        "Per case that discriminates the running kernel's policy from another lab kernel's (the "
        "predictor's `discriminates`), the policy groups ranked by strict distance to the "
        f"observed placements: a hit is nearer, by at least {MARGIN} TV, to the running kernel's "
        "group than to every other group; ties are misses. Rows: the running kernel; columns: "
        "the nearest group by the lab kernels in it (the diagonal is the hits; a hit's group may "
        "hold policies the case does not tell apart) or tie. Controls (cases that discriminate "
        "nothing), cases that tell apart only other policies and NO-PREDICTION cells are counted "
        f"apart. Fewer than {MIN_CASES} counted cases: not tested; the goal is "
        f"{GOAL * 100:.0f}% hits.", 100) + [""]
    lines += ["| kernel | verdict | hits | " + " | ".join(cols) + " | controls | other pairs "
              "| NO-PREDICTION | emulation-dependent |",
              "|---|---|---|" + "---|" * (len(cols) + 4)]
    for k, s in summaries.items():
        pct = f" ({s['hit'] / s['counted'] * 100:.0f}%)" if s["counted"] else ""
        lines.append(f"| {k} | {s['verdict']} | {s['hit']} of {s['counted']}{pct} | "
                     + " | ".join(str(s["confusion"].get(c, 0) or "") for c in cols)
                     + f" | {s['control']} | {s['other-pairs']} | {s['no-prediction']} | "
                     f"{s['emulation']} |")
    lines.append("")
    lines += miss_lines(per_row) + unknown_lines(per_row) + emulation_lines(per_row)
    return lines


def miss_lines(per_row):
    out = []
    for k, rows in per_row.items():
        for preset, r in rows:
            if r["kind"] != "miss":
                continue
            head = (f"- MISS {preset} / {k} / {r['case']}: nearest {r['nearest']}; strict to "
                    f"its own group {r['own']:.3f}, to the others " + ", ".join(
                        f"{n} {d:.3f}" for n, d in r["others"].items())
                    + (" (depends on emulation)" if r.get("emulation") else ""))
            out += wrap(head)
            out += wrap(f"  - {r['trace']}" if r.get("trace") else
                        "  - unexplained: the case has no wakeup trace", "    ")
    return (["Misses, each with its traced wakeups:", ""] + out + [""]) if out else []


def wrap(line, indent="  "):
    """A list item in lines of at most 100 columns."""
    return textwrap.wrap(line, 100, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


def unknown_lines(per_row):
    """The cases not judged, one line per cell and reason."""
    by = {}
    for k, rows in per_row.items():
        for p, r in rows:
            if r["kind"] == "unknown":
                by.setdefault((p, k, r["why"]), []).append(r["case"])
    out = [x for (p, k, why), cases in by.items() for x in wrap(
        f"- {p} / {k}: {len(cases)} case(s): {why}" + (f" ({cases[0]})" if len(cases) == 1
                                                       else ""))]
    return (["Cases not judged:", ""] + out + [""]) if out else []


def emulation_lines(per_row):
    """The counted cases whose discriminating pairs differ without the emulation-only
    alternatives, once per preset and case."""
    seen = {}
    for rows in per_row.values():
        for p, r in rows:
            if r.get("emulation") and r["kind"] in ("hit", "miss"):
                seen[(p, r["case"])] = r
    out = [x for (p, c), r in seen.items() for x in wrap(
        f"- {p} / {c}: discriminates {pairs_text(r['pairs'])}; natively "
        f"{pairs_text(r['native']) or 'nothing'}")]
    return (["Counted cases that depend on emulation (their pairs differ without the "
             "emulation-only alternatives):", ""] + out + [""]) if out else []


def pairs_text(pairs):
    return ", ".join("/".join(p) for p in pairs)


def dropped_lines(dropped):
    """`dropped`: [(preset, cell, {case, status, reason})]."""
    out = [x for p, k, d in dropped
           for x in wrap(f"- {p} / {k} / {d['case']}: {d['status']}: {d['reason']}")]
    return (["#### Dropped cases (a non-ok status)", ""] + out + [""]) if out else []
