"""The guest kernel's placements held against the steady state of the model of the policy it runs
(`wakebench predict --results`), per kernel-placed case and per mechanism, with the reasons the
model gives where they differ. Pure functions except `agreement()`, which runs wakebench."""
import json
import os
import subprocess

from . import LabError, inputs, predictions, resultset, write_atomic
from .cpulist import format_cpu_list
from .registry import NO_KERNEL_WAKEUP

# Mechanisms whose tasks never block: their placements are the load balancer's, not a wakeup's, so
# the wakeup model has nothing to say about them (the predictor models their "none" wake flags
# like a blocking wakeup; see the lab README).
NO_WAKEUP = {m: f"{why}: no kernel wakeup to model (placements come from the load balancer only)"
             for m, why in NO_KERNEL_WAKEUP.items()}
# Fewer task migrations than one per PHASE_RT minority-class round trips: the pair switched
# placement in phases rather than alternating wake by wake.
PHASE_RT = 20
# A class holding less than this share of a case's wakeups is noise, not a placement.
SHARE = 0.10


def steady_states(model):
    """A policy's steady state and its alternatives (predictions.PolicyModel), as class
    distributions."""
    if model is None:
        return []
    return [{c: f for c, f in d.items() if f > 0} for d in
            [model.classes] + [a.classes for a in model.alternatives]]


def mix_text(u):
    """The alternatives' weights in the predictor's closest mix (a row's `uncertain`), e.g.
    "27% of llc 100%, 15% of cross-llc 100%"."""
    if u.get("best_alternative") is None:
        return "the steady state alone"
    return ", ".join(f"{w * 100:.0f}% of {pct_text(a['classes'])}"
                     for w, a in zip(u["best_weights"], u["alternatives"]) if w >= 0.005) or \
        "the steady state alone (the alternatives under 0.5%)"


def pct_text(d):
    return " ".join(f"{c} {f * 100:.0f}%" if f >= 0.005 else f"{c} <1%" for c, f in
                    sorted(d.items(), key=lambda kv: -kv[1]) if f > 0) or "-"


def attribute(pred, obs, settled, migrations, start, observed_cpus, round_trips, reps,
              model_cpus=()):
    """Why the guest kernel's placements differ from the model's steady state, in the model's own
    terms (policy-model.md section numbers): the snapshot model fixes what the kernel decides from
    timing, so each rule names the assumption the observation breaks."""
    why = []
    if not settled:
        why.append("the model's ping-pong did not settle into a cycle (section 10)")
    if obs.get("same-cpu", 0) > pred.get("same-cpu", 0) + SHARE:
        why.append("stacked on one CPU more often than the model: section 2 bypass (the wakee was "
                   "still queued or on_cpu when woken: ttwu_runnable() / the TTWU_QUEUE wakelist "
                   "keep its CPU and select_task_rq_fair is never called; the model assumes a "
                   "fully blocked wakee, section 7 item 1)")
    if pred.get("same-cpu", 0) > obs.get("same-cpu", 0) + SHARE:
        why.append("the model stacks the pair but the kernel spread it (wake_affine_idle() only "
                   "keeps a sync wakee on the waker CPU when the waker is alone there; any other "
                   "runnable task on it, e.g. a kworker, changes that: section 3.3)")
    spread = [c for c, f in obs.items() if f >= SHARE]
    moves = sum(v for v in (migrations or {}).values() if isinstance(v, (int, float)))
    minority = round_trips * (1 - max(obs.values(), default=1))
    if len(spread) > 1 and len([c for c, f in pred.items() if f >= SHARE]) <= 1:
        if moves * PHASE_RT <= minority:
            # Few moves, each followed by many round trips in the new placement: phases, not a
            # per-wakeup alternation.
            why.append(f"the pair ran in phases ({', '.join(spread)}): {moves} task migrations in "
                       f"{round_trips} measured round trips ({reps} repetition(s), each a fresh "
                       "pair from the start CPUs), each placement then held for many wakes, "
                       "where the model settles on one placement from the start CPUs: a wake "
                       "that found a CPU busy for a moment or an idle core through a time-varying "
                       "hint (has_idle_cores, section 7 item 2 and section 11 item 3), or a "
                       "move between wakes by load balancing (section 7 item 1); "
                       "--trace-wakeups tells them apart (trace.migrations at_wakeup / other)")
        else:
            why.append("the kernel alternates between " + ", ".join(spread) + " where the model "
                       "settles on one placement: timing-dependent hints the snapshot fixes "
                       "(has_idle_cores and SIS_UTIL nr_idle_scan, section 7 items 2-3 and "
                       "section 11 item 3; recent_used_cpu updated by both tasks' wakes)")
    far = ("cross-llc", "cross-numa")
    if sum(obs.get(c, 0) for c in far) > sum(pred.get(c, 0) for c in far) + SHARE:
        why.append("the kernel kept the pair in different LLCs/nodes more than the model: "
                   "wake_affine_weight() on PELT loads the model takes as defaults (section 11 "
                   "item 4) or idle balancing moving a task away between wakes")
    if sum(obs.get(c, 0) for c in far) + SHARE < sum(pred.get(c, 0) for c in far):
        why.append("the kernel pulled the pair together where the model keeps it apart: load "
                   "balancing (idle/newidle/NUMA) migrations between wakes, which the snapshot "
                   "model does not simulate (section 7 item 1)")
    why += left_start(start, observed_cpus, migrations, model_cpus, round_trips)
    moved = {k: v for k, v in (migrations or {}).items() if v}
    if moved:
        why.append("migrations during the measurement: " + ", ".join(
            f"{k} {v}" for k, v in sorted(moved.items())) + " (the model only places the wakee; "
            "load balancing also moves the waker)")
    return why or ["no model explanation found; see the predictor's verdict"]


def left_start(start, observed_cpus, migrations, model_cpus, round_trips):
    """Each side that ran away from its start CPU without a measured migration to get there."""
    why = []
    for side, k in (("waker", 0), ("wakee", 1)):
        ran = {int(c): n for c, n in ((observed_cpus or {}).get(side) or {}).items() if n}
        if not start or len(start) <= k or not ran:
            continue
        away = {c: n for c, n in ran.items() if c != start[k] and c not in (model_cpus or ())}
        # Every CPU other than the start one that a side reached during the measured round trips
        # costs it a measured migration; more such CPUs than migrations means it had already
        # moved during the warm-up round trips.
        if away and len(away) > (migrations or {}).get(side, 0):
            why.append(f"the {side} ran on CPU(s) {format_cpu_list(away)} for "
                       f"{sum(away.values())} of {round_trips} round trips, not on its start CPU "
                       f"{start[k]}, with {(migrations or {}).get(side, 0)} migrations measured: "
                       "it left the start CPU during the warm-up round trips (its first wakes, or "
                       "load balancing), so the measured ping-pong ran from another state than "
                       "the model's")
    return why


# The predictor's verdict words (docs/policy-model.md#verdicts), in the order they are reported;
# only MATCH is agreement.
VERDICTS = ("MATCH", "EXPLAINED", "NO-PREDICTION", "MISS")
# The predictor's thresholds for those words, defined in analysis/predict/predict_results.h
# (kMatchDistance, kNoPredictionCoverage) and written by `predict --json` as match_distance and
# no_prediction_coverage; the lab only reports them (check_thresholds holds the two equal).
MATCH_DISTANCE = 0.25
NO_PREDICTION_COVERAGE = 0.90


def check_thresholds(pred, where):
    """LabError in one line when the predictions (`predict --json`, typed) were judged with other
    thresholds than the ones the lab reports; predictions of a wakebench before them pass."""
    for key, got, want in (("match_distance", pred.match_distance, MATCH_DISTANCE),
                           ("no_prediction_coverage", pred.no_prediction_coverage,
                            NO_PREDICTION_COVERAGE)):
        if got is not None and got != want:
            raise LabError(f"{where}: {key} {got}, not the lab's {want} (wblab/agreement.py)")


def why_not_compared(e, case, policy):
    """Why entry `e` (a predictions.PredictionCase) is not held to `policy`, or None."""
    model = e.policy(policy)
    if e.mechanism in NO_WAKEUP:
        return NO_WAKEUP[e.mechanism]
    if e.skipped:
        return f"the predictor skips it: {e.skipped}"
    if case and not case.ok:
        return f"the guest's case {case.status}: {case.reason}"
    if model is None:
        return f"no {policy} prediction"
    if not (e.measured and e.measured.classes):
        return "no observed placements"
    if model.verdict is None:
        return f"the predictor gives no verdict for {policy} (a wakebench before it did)"
    return None


def compute_agreement(results, pred, policy="mainline"):
    """Per kernel-placed case: the predictor's verdict for `policy` (MATCH, EXPLAINED,
    NO-PREDICTION, MISS), the strict agreement between its steady state and the observed class
    distribution (1 - the total-variation distance), the agreement with its range (1 - the distance
    to the closest mix of the steady state and its alternatives) and the range's coverage; per
    mechanism the round-trip-weighted strict agreement and how many cases got each word.
    `pred`: the typed predictions (predictions.Predictions)."""
    # predict's entry names its kernel case (`case`); mechanism, mode and placement do not tell
    # apart the cases of one placement with other start CPUs or knobs.
    by_name = {c.name: c for c in results.cases}
    cases, per_mech, not_compared = [], {}, []
    for e in pred.cases:
        case = by_name.get(e.case)
        why_not = why_not_compared(e, case, policy)
        if why_not:
            if case:  # a kernel case the guest ran (not the predictor's default entry)
                not_compared.append({"mechanism": e.mechanism, "mode": e.mode,
                                     "placement": e.placement, "name": case.name,
                                     "reason": why_not})
            continue
        model = e.policy(policy)
        row = case_row(e, case, model, policy)
        if row["verdict"] != "MATCH":
            # A model without `settled` (a wakebench before it) is not blamed for not settling.
            row["attribution"] = attribute(
                row["model"]["classes"], e.measured.classes,
                True if model.settled is None else model.settled, e.measured.migrations,
                e.start, case and case.observed_cpus, row["observed"]["round_trips"],
                len(case.repetitions if case else ()) or 1, model.cpus)
        cases.append(row)
        m = per_mech.setdefault(e.mechanism, dict(
            {"wake_flags": e.wake_flags, "cases": 0, "round_trips": 0, "weighted": 0.0},
            **{v: 0 for v in VERDICTS}))
        m["cases"] += 1
        m["round_trips"] += row["observed"]["round_trips"]
        m["weighted"] += row["strict_agreement"] * row["observed"]["round_trips"]
        m[row["verdict"]] += 1
    for m in per_mech.values():
        w = m.pop("weighted")
        m["agreement"] = round(w / m["round_trips"], 3) if m["round_trips"] else None
    return {"policy": policy, "emulated": bool(pred.emulated),
            "metric": f"the predictor's verdict for {policy}; agreement = 1 - total variation "
                      f"distance between the {policy} model's steady state and the observed class "
                      "distribution, weighted by observed round trips",
            "model": pred.model, "topology": pred.topology,
            "mechanisms": per_mech, "cases": cases, "not_compared": not_compared,
            "disagreements": [c for c in cases if "attribution" in c]}


def as_list(t):
    """A typed record's tuple as the JSON array the report keeps (None stays None)."""
    return None if t is None else list(t)


def case_row(e, case, model, policy):
    """One compared case (`e`, `model`: predictions.PredictionCase, PolicyModel): the verdict,
    the strict and range agreements, the coverage, and what the model and the guest said."""
    measured, dist = e.measured, model.distance
    row = {"mechanism": e.mechanism, "mode": e.mode, "placement": e.placement,
           "name": case and case.name, "wake_flags": e.wake_flags,
           "start": as_list(e.start), "allowed": e.allowed,
           "verdict": model.verdict, "coverage": model.coverage,
           "model": {"classes": {c: f for c, f in model.classes.items() if f > 0},
                     "cpus": as_list(model.cpus), "settled": model.settled,
                     "states": steady_states(model)},
           "mainline_model": steady_states(e.policy("mainline")),
           "observed": {"classes": measured.classes,
                        "round_trips": round(sum(measured.histogram.values())),
                        "cpus": case and case.observed_cpus,
                        "migrations": measured.migrations},
           "strict_agreement": round(1 - dist.strict, 3),
           "range_agreement": round(1 - dist.best, 3),
           "consistent_with": as_list(e.consistent_with) or [],
           "model_consistent": any(policy in g.policies for g in e.groups
                                   if g.verdict == "MATCH")}
    if model.uncertain:
        row["uncertain"] = {"alternatives": [{"cause": a.cause.text, "classes": a.classes,
                                              "cpus": as_list(a.cpus)}
                                             for a in model.alternatives],
                            "best_share": dist.share, "best_alternative": dist.alternative,
                            "best_weights": list(dist.weights)}
    if model.explained_by:
        row["explained_by"] = [x.to_json() for x in model.explained_by]
    return row


def render_agreement(report):
    pct = pct_text
    pol = report["policy"]
    lines = [f"agreement: guest kernel placements vs the {pol} model "
             f"(topology {report['topology']}; placements only, no timings)",
             f"{'mechanism':<14} {'flags':<12} {'cases':>5} {'round trips':>11} "
             f"{'strict':>6}  " + " ".join(VERDICTS)]
    for mech, m in report["mechanisms"].items():
        a = "-" if m["agreement"] is None else f"{m['agreement'] * 100:.0f}%"
        lines.append(f"{mech:<14} {m['wake_flags'] or '?':<12} {m['cases']:>5} "
                     f"{m['round_trips']:>11} {a:>6}  "
                     + " ".join(f"{m[v]:>{len(v)}}" for v in VERDICTS))
    lines.append("")
    for c in report["cases"]:
        lines.append(f"{c['name'] or c['placement']} (start {c['start']}, allowed "
                     f"{c['allowed']}): {c['verdict']}, strict agreement "
                     f"{c['strict_agreement'] * 100:.0f}%, with the range "
                     f"{c['range_agreement'] * 100:.0f}% (the range admits "
                     f"{(c['coverage'] or 0) * 100:.0f}% of what the cpuset allows)")
        lines.append(f"    {pol} {pct(c['model']['classes'])} on CPUs "
                     f"{c['model']['cpus']}; observed {pct(c['observed']['classes'])}")
        if "uncertain" in c:
            u = c["uncertain"]
            for a in u["alternatives"]:
                lines.append(f"    uncertain: or {pct(a['classes'])} on CPUs {a['cpus']} once "
                             f"{a['cause']}")
            lines.append(f"    best mix: {mix_text(u)}")
        for why in c.get("attribution", []):
            lines.append(f"    why: {why}")
    if report["not_compared"]:
        lines.append("")
        lines.append("not compared:")
    for c in report["not_compared"]:
        lines.append(f"  {c['name'] or c['mechanism'] + '/' + c['mode'] + '/' + c['placement']}: "
                     f"{c['reason']}")
    return "\n".join(lines) + "\n"


# What wakebench reads for the lab: the cells its own guests wrote, whose decision records outgrow
# wakebench's 256 MiB input limit (21 loaded cases x 3 repetitions on smt2-3core: 293 MB); a
# WAKEBENCH_MAX_INPUT_MIB the user set wins.
LAB_MAX_INPUT_MIB = 4096


def run_json(cmd):
    """stdout of `cmd` as JSON, or (None, the last line of its stderr)."""
    env = dict(os.environ)
    env.setdefault(inputs.MAX_ENV, str(LAB_MAX_INPUT_MIB))
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["no message"])[-1]
    return json.loads(p.stdout), None


def agreement(wakebench, results_path, out, policy="mainline"):
    """Runs `wakebench predict --results` on the guest's result set and holds, per mechanism,
    `policy`'s model against the placements the guest kernel made; writes predict.json,
    agreement.json and agreement.txt into `out`."""
    pred, msg = run_json([wakebench, "predict", "--results", results_path, "--json"])
    if pred is None:
        print(f"\nagreement report: not produced: `wakebench predict --results` failed: {msg}")
        return {"unavailable": f"wakebench predict --results: {msg}"}
    typed = predictions.read(pred, f"wakebench predict --results {results_path} --json")
    # pinned_rtt_ns / predicted_rtt_ns in the predictions are the guest's medians: emulated under
    # TCG (predict reads environment.emulated, which the lab sets by accelerator).
    note = ("rtt figures are the guest's EMULATED (qemu TCG) timings; only the placements are "
            "the guest kernel's own") if typed.emulated else \
        "rtt figures are a KVM guest's timings: a virtual machine's, not the host's"
    saved = dict(pred, note=note)
    write_atomic(out / "predict.json", json.dumps(saved, indent=1) + "\n")
    results = resultset.load(results_path)
    report = compute_agreement(results, typed, policy)
    text = render_agreement(report)
    write_atomic(out / "agreement.json", json.dumps(report, indent=1) + "\n")
    write_atomic(out / "agreement.txt", text)
    print("\n" + text, end="")
    return {k: report[k] for k in ("policy", "mechanisms", "disagreements", "not_compared")}
