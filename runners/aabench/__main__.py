"""The A/A and power benchmark of `wakebench compare`'s verdicts
(docs/aa-benchmark.md#aa-benchmark-of-compare):

    python3 -m runners.aabench MODE [--config configs/power.json] [--out DIR] [--reuse]
                               [MODE OPTIONS] [-- RUN ARGS...]

  aa             --pairs N A/A pairs (two runs of the suite, fixed repetitions): DIFFERENT per pair
  shift          --rounds N rounds of an A run and two shifted runs (work_ns adding 5 % and 10 % to
                 each case's RTT): the verdict per case whose measured shift counts
  until-decided  --pairs N rounds of an A run, then `run --until-decided A` of the same suite (A/A)
                 and of the 10 % shift: the run's own verdicts and the time they took
  ab             --pairs N runs of `run --ab SPEC` through a switch that changes nothing (the same
                 value on both sides): the two sets of each compared as A/A
  runs           --trials N trials of --runs R runs a side, alternated (A, B, the 10 % shift S):
                 compare's run level on the first r runs of each side, A/A and shift, r = 1..R
  advice         --trials N trials of --runs R runs a side as `runs`, then, within --budget
                 (seconds, or runs: 40runs), the runs compare advises for each case UNKNOWN at R,
                 and compare again at the advised runs: how often the verdict then comes right

Each mode prints its table and goal lines and writes them to DIR/summary.txt, next to the result
sets, logs and compare outputs; exit status 0 when its goals are met, 1 when not, 2 on bad input.
"""

import argparse
import datetime
import json
import os
import socket
import subprocess
import sys
import textwrap
import time

from runners.aabench import advice, core, runs, shifts
from runners.aabench.core import InputError
from wblab import inputs  # on the path core.py puts runners/lab on

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_SPEC_SYSCTL = "kernel.sched_rr_timeslice_ms"


class Bench:
    """Runs wakebench into one --out folder; every run's stderr goes to a .log beside its set."""

    def __init__(self, args):
        build = os.environ.get("WB_BUILD_DIR", os.path.join(ROOT, "build"))
        self.binary = os.path.join(build, "wakebench")
        if not os.access(self.binary, os.X_OK):
            raise InputError(f"{self.binary}: no wakebench binary (build it, or set WB_BUILD_DIR)")
        self.config = args.config
        self.out = args.out
        self.reuse = args.reuse
        self.run_args = args.run_args
        self.noise = None  # the A/A noise file of the calibration runs, once made
        self.timed = []  # (set, seconds) of each run this invocation ran
        try:
            os.makedirs(self.out, exist_ok=True)
        except OSError as e:
            raise InputError(f"{self.out}: cannot make the --out folder: {e.strerror}") from None

    def path(self, name):
        return os.path.join(self.out, name)

    def run(self, out, extra=(), config=None, produces=None, repetitions=None):
        """`wakebench run` into `out` (skipped with --reuse when `produces`, default [out], all
        exist), with `repetitions` instead of the config's when given. Returns the seconds it
        took (0 when reused)."""
        produces = produces or [out]
        if self.reuse and all(os.path.exists(p) for p in produces):
            return 0.0
        cmd = [self.binary, "run", "--config", config or self.config, "--out", out]
        cmd += list(extra) + core.with_repetitions(self.run_args, repetitions)
        print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
        start = time.monotonic()
        log = os.path.splitext(out)[0] + ".log"
        with open(log, "w") as f:
            rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=f).returncode
        took = time.monotonic() - start
        if rc != 0:
            raise InputError(f"wakebench run exited {rc} after {took:.0f} s: {last_line(log)} "
                             f"(log {log})")
        self.timed.append((out, took))
        print(f"  {took:.0f} s", file=sys.stderr, flush=True)
        return took

    def compare(self, a, b, name):
        """compare A B --format json, kept as `name` in --out; returns the checked document. A
        side given as a list of several runs is compared at the run level (A1 A2 -- B1 B2)."""
        dest = self.path(name)
        sides = [[x] if isinstance(x, str) else list(x) for x in (a, b)]
        cmd = [self.binary, "compare", "--format", "json"]
        if self.noise:
            cmd += ["--noise", self.noise]
        cmd += sides[0] + ["--"] + sides[1]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise InputError(f"wakebench compare {a} {b}: {p.stderr.strip().splitlines()[-1:]}")
        with open(dest, "w") as f:
            f.write(p.stdout)
        return core.check_compare(inputs.parse_json(p.stdout, "compare output", dest), dest)


def last_line(path):
    try:
        with open(path) as f:
            lines = [x.strip() for x in f if x.strip()]
        return lines[-1][:200] if lines else "(no output)"
    except OSError:
        return "(no log)"


def save_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def calibrate(bench, pairs):
    """`pairs` A/A pairs of the suite, then `wakebench noise` over them: the machine's A/A floor
    that compare (and an --until-decided run's baseline, through run --noise) holds each case's
    change to. Sets bench.noise; returns a line saying so."""
    sets = []
    for i in range(pairs):
        for side in "ab":
            sets.append(bench.path(f"cal{i}-{side}.json"))
            bench.run(sets[-1])
    noise = bench.path("noise.json")
    p = subprocess.run([bench.binary, "noise"] + sets + ["--out", noise], capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise InputError(f"wakebench noise: {p.stderr.strip().splitlines()[-1:]}")
    bench.noise = noise
    return f"A/A floor: {noise}, from {len(sets)} calibration runs"


def mode_aa(bench, args):
    pairs = []
    for i in range(args.pairs):
        a, b = bench.path(f"aa{i}-a.json"), bench.path(f"aa{i}-b.json")
        bench.run(a)
        bench.run(b)
        pairs.append(core.count(core.case_verdicts(bench.compare(a, b, f"aa{i}-compare.json"))))
    line, ok = core.aa_goal(pairs)
    return core.pair_table(pairs) + ["", line, aa_same_note(pairs)], ok


def aa_same_note(pairs):
    t = core.total(pairs)
    return (f"A/A cases SAME: {core.share(t['SAME'], t['cases'])}, UNKNOWN: "
            f"{core.share(t['UNKNOWN'], t['cases'])} (a goal only under --until-decided)")


def shifted_run(bench, a, tag, shift, extra=()):
    """The shifted copy of the suite (work_ns from the A set `a`) run into <tag>.json; returns
    (path, work {ident: work_ns})."""
    a_doc = core.load_set(a)
    work = shifts.work_plan(a_doc, (shift,))[shift]
    cfg = shifts.shift_config(core.load_json(bench.config, "config"), work,
                              f"shift{100 * shift:.0f}")
    cfg_path = bench.path(f"{tag}-config.json")
    save_json(cfg_path, cfg)
    out = bench.path(f"{tag}.json")
    extra = list(extra)
    if extra and extra[0] == "--until-decided":
        base = bench.path(f"{tag}-base.json")  # the A set labelled with the shift's work_ns
        save_json(base, shifts.with_work(a_doc, work))
        extra = ["--until-decided", base] + extra[2:]
    bench.run(out, extra, config=cfg_path)
    return out, work


def mode_shift(bench, args):
    records, lines_cases = [], []
    counts = {0.05: [], 0.10: []}
    for r in range(args.rounds):
        a = args.base if (args.base and r == 0) else bench.path(f"shift{r}-a.json")
        if a != args.base:
            bench.run(a)
        a_doc = core.load_set(a)
        for s in shifts.SHIFTS:
            tag = f"shift{r}-x{100 * s:.0f}"
            b, work = shifted_run(bench, a, tag, s)
            b_doc = core.load_set(b)
            relabelled = bench.path(f"{tag}-as-a.json")  # the shifted set labelled work 0
            save_json(relabelled, shifts.with_work(b_doc, {}))
            verdicts = core.case_verdicts(bench.compare(a, relabelled, f"{tag}-compare.json"))
            recs = shifts.classify(a_doc, b_doc, s, work)
            records += recs
            lines_cases += shifts.shift_table(recs, verdicts)[(1 if lines_cases else 0):]
            for cls in counts:
                counts[cls].append(core.count(verdicts, {x["ident"] for x in recs
                                                         if x["cls"] == cls}))
    lines = lines_cases + [""] + summary_of_records(records)
    t5 = core.total(counts[0.05])
    lines.append(f"5% shift: {core.share(t5['SAME'], t5['cases'])} of the cases SAME, "
                 f"{core.share(t5['DIFFERENT'], t5['cases'])} DIFFERENT "
                 f"({t5['slower']} slower); no goal")
    line, ok = core.shift_same_goal(counts[0.10])
    return lines + [line], ok


def summary_of_records(records):
    ex = shifts.excluded_counts(records)
    n5 = sum(1 for r in records if r["cls"] == 0.05)
    n10 = sum(1 for r in records if r["cls"] == 0.10)
    lines = [f"shifted cases: {len(records)}; counted as a 5% shift: {n5}, as 10%: {n10}",
             f"excluded: {ex['outside windows']} measured outside 4-6/8-12%, "
             f"{ex['shares moved']} kernel-placed whose class shares moved > "
             f"{shifts.MAX_SHARE_MOVE_PTS:.0f} pts, {ex['failed']} not ok"]
    rule = shifts.rule_check(records)
    lines.append("work_ns rule (an RTT gains 2 x work_ns + one timer read): measured / intended "
                 "shift, pinned cases' median: " + (f"{rule:.2f}" if rule is not None else "-"))
    return lines


def decided_cases(set_path, verdicts):
    """[{"ident", "verdict", "change_pct", "decided_s"}]: when each case's deciding look was
    taken, from the run's log (the set's elapsed_s when the log lacks it)."""
    try:
        with open(os.path.splitext(set_path)[0] + ".log") as f:
            times = core.look_times(f.read())
    except OSError:
        times = {}
    doc = core.load_set(set_path)
    elapsed = doc["until_decided"].get("elapsed_s")
    out = []
    for name, v in verdicts.items():
        t = times.get(v.get("look")) if v.get("verdict") != "UNKNOWN" else None
        if t is None and v.get("verdict") != "UNKNOWN":
            t = elapsed
        out.append({"ident": name, "verdict": v["verdict"], "change_pct": v.get("change_pct"),
                    "decided_s": t, "look": v.get("look"), "repetitions": v.get("repetitions")})
    return out


DECIDED_HEAD = f"{'run':<6} {'case':<26} {'verdict':<9} {'change':>7} look  reps  after"


def decided_table(tag, cases, notes=None):
    """One line per case of a --until-decided run: its verdict, the look that decided it, its
    repetitions and the seconds the run had spent then; notes {ident: text} go after."""
    lines = []
    for c in cases:
        ch = f"{c['change_pct']:+.1f}%" if c.get("change_pct") is not None else "-"
        t = f"{c['decided_s']:.0f} s" if c.get("decided_s") is not None else "-"
        note = (notes or {}).get(c["ident"], "")
        lines.append(f"{tag:<6} {c['ident'][:26]:<26} {c['verdict']:<9} {ch:>7} "
                     f"{c.get('look') or '-':>4} {c.get('repetitions') or '-':>5} {t:>6}"
                     + (f"  {note}" if note else ""))
    return lines


def mode_until_decided(bench, args):
    ud = ["--until-decided", None, "--looks", str(args.looks), "--budget", str(args.budget)]
    aa_pairs, shift_cases, lines, times, warnings = [], [], [], [], []
    records = []
    for i in range(args.pairs):
        a = bench.path(f"ud{i}-a.json")
        bench.run(a, ["--noise", bench.noise] if bench.noise else [],
                  repetitions=args.base_repetitions)
        b = bench.path(f"ud{i}-aa.json")
        bench.run(b, [ud[0], a] + ud[2:])
        b_doc = core.load_set(b)
        v = core.until_decided_verdicts(b_doc, b)
        aa_pairs.append(core.count(v))
        aa_cases = decided_cases(b, v)
        lines += decided_table(f"A/A {i + 1}", aa_cases)
        times.append(f"A/A {i + 1}: {core.decide_times(aa_cases)}")
        warnings.append(core.counts_mismatch(b_doc, v))
        s, work = shifted_run(bench, a, f"ud{i}-x10", 0.10, ud)
        s_doc = core.load_set(s)
        recs = shifts.classify(core.load_set(a), s_doc, 0.10, work)
        records += recs
        counted = {r["ident"] for r in recs if r["cls"] == 0.10}
        sv = core.until_decided_verdicts(s_doc, s)
        cases = decided_cases(s, sv)
        notes = {r["ident"]: ("a 5% shift: no goal" if r["cls"] == 0.05 else r["why"])
                 for r in recs if r["ident"] not in counted}
        lines += decided_table(f"10% {i + 1}", cases, notes)
        times.append(f"10% {i + 1}: {core.decide_times(cases)}")
        warnings.append(core.counts_mismatch(s_doc, sv))
        shift_cases += [c for c in cases if c["ident"] in counted]
    lines = [DECIDED_HEAD] + lines
    lines += ["", "A/A pairs under --until-decided:"] + core.pair_table(aa_pairs) + [""]
    lines += summary_of_records(records) + times + [w for w in warnings if w]
    g = [core.aa_goal(aa_pairs, "A/A until decided"), core.aa_same_goal(aa_pairs),
         core.shift_decided_goal(shift_cases)]
    return lines + [x[0] for x in g], all(x[1] for x in g)


def mode_ab(bench, args):
    spec = args.spec
    if not spec:
        try:
            with open("/proc/sys/" + DEFAULT_SPEC_SYSCTL.replace(".", "/")) as f:
                v = f.read().strip()
        except OSError as e:
            raise InputError(f"{DEFAULT_SPEC_SYSCTL}: cannot read it ({e.strerror}); give --spec")
        spec = f"sysctl:{DEFAULT_SPEC_SYSCTL}={v},{v}"
    pairs = []
    for i in range(args.pairs):
        stem = bench.path(f"ab{i}.json")
        a, b = bench.path(f"ab{i}-ab0.json"), bench.path(f"ab{i}-ab1.json")
        bench.run(stem, ["--ab", spec], produces=[a, b])
        pairs.append(core.count(core.case_verdicts(bench.compare(a, b, f"ab{i}-compare.json"))))
    line, ok = core.aa_goal(pairs, "A/A through the switch")
    return [f"--ab {spec}", ""] + core.pair_table(pairs) + ["", line, aa_same_note(pairs)], ok


def shift_setup(bench, t, a0):
    """The 10 % shift of trial t: its work {ident: work_ns} from A's first run `a0` and its
    config (kept as runs<t>-s-config.json). Returns (work, config path)."""
    work = shifts.work_plan(core.load_set(a0), (runs.SHIFT,))[runs.SHIFT]
    cfg = bench.path(f"runs{t}-s-config.json")
    save_json(cfg, shifts.shift_config(core.load_json(bench.config, "config"), work, "shift10"))
    return work, cfg


def run_one(bench, t, stream, i, paths, cfg, repetitions=None):
    """Run i of one stream of trial t, appended to paths[stream] (an S set relabelled as work 0);
    returns the seconds it took."""
    out = bench.path(runs.run_name(t, stream, i))
    took = bench.run(out, config=cfg if stream == "s" else None, repetitions=repetitions)
    if stream == "s":
        relabelled = os.path.splitext(out)[0] + "-as-a.json"
        save_json(relabelled, shifts.with_work(core.load_set(out), {}))
        out = relabelled
    paths[stream].append(out)
    return took


def run_trial(bench, t, n_runs):
    """One trial's runs, alternated (runs.trial_order): {"a": [paths], "b": [...], "s": [the S
    sets relabelled as work 0]}, the shift's work {ident: work_ns} and the S config."""
    paths, work, cfg = {s: [] for s in runs.STREAMS}, None, None
    for stream, i in runs.trial_order(t, n_runs):
        if stream == "s" and cfg is None:
            work, cfg = shift_setup(bench, t, paths["a"][0])
        run_one(bench, t, stream, i, paths, cfg)
    return paths, work, cfg


def compare_trial(bench, t, paths, work, r, kinds=("aa", "shift"), first=0):
    """compare of r runs a side of trial t, from run `first` on: (A/A verdicts, shift verdicts,
    the idents counted as a 10 % shift over those runs); ({}, {}, set()) for a kind not in
    `kinds`."""
    a, b, s = (paths[x][first:first + r] for x in runs.STREAMS)
    tag = f"runs{t}-r{r}" + (f"-from{first}" if first else "")
    aa, sv, counted = {}, {}, set()
    if "aa" in kinds:
        aa = core.case_verdicts(bench.compare(a, b, f"{tag}-aa.json"))
    if "shift" in kinds:
        recs = runs.classify_runs([core.load_set(p) for p in a], [core.load_set(p) for p in s],
                                  work)
        counted = {x["ident"] for x in recs if x["cls"] == runs.SHIFT}
        sv = core.case_verdicts(bench.compare(a, s, f"{tag}-x10.json"))
    return aa, sv, counted


def mode_runs(bench, args):
    by_r = {r: {"aa": [], "shift": []} for r in range(1, args.runs + 1)}
    trials = [run_trial(bench, t, args.runs) for t in range(args.trials)]  # every run first
    for t, (paths, work, _) in enumerate(trials):
        for r in by_r:
            aa, sv, counted = compare_trial(bench, t, paths, work, r)
            by_r[r]["aa"].append(core.count(aa))
            by_r[r]["shift"].append(core.count(sv, counted))
    lines, ok = runs.goals_at(by_r)
    return runs.run_count_table(by_r) + [""] + lines, ok


def first_look(bench, trials, have):
    """compare at the first `have` runs a side of every trial: ({trial: {"aa": count, "shift":
    count of the counted cases}}, the UNKNOWN cases as advice.candidates)."""
    before, cands = {}, []
    for t, (paths, work, _) in enumerate(trials):
        aa, sv, counted = compare_trial(bench, t, paths, work, have)
        before[t] = {"aa": core.count(aa), "shift": core.count(sv, counted)}
        reps = advice.repetitions_of(core.load_set(paths["a"][0]))
        cands += advice.candidates(t, "aa", aa, have, reps=reps)
        cands += advice.candidates(t, "shift", sv, have, counted, reps)
    return before, cands


def run_cost_of(bench, args, trials):
    """(run_cost(repetitions or None), note) for advice.plan: 1 a run for a budget in runs; for
    one in seconds, the seconds a repetition took in this invocation's runs times the run's
    repetitions (the first runs' when the advice names none)."""
    if args.budget_unit == "runs":
        return (lambda reps: 1), ""
    reps0 = advice.repetitions_of(core.load_set(trials[0][0]["a"][0]))
    per_rep = advice.seconds_per_repetition(
        [(took, advice.repetitions_of(core.load_set(out))) for out, took in bench.timed])
    if per_rep is None:
        raise InputError("--budget in seconds: no run was timed (all reused with --reuse); give "
                         "the budget in runs (40runs)")
    note = f" (a run of {reps0} repetitions about {per_rep * reps0:.0f} s here)"
    return (lambda reps: per_rep * (reps or reps0)), note


def extend(bench, trials, p, have, limit, run_cost, unit):
    """The plan's new runs (advice.extension_order), each at its trial's advised repetitions,
    stopping before one that would take the spending past `limit`; returns what was spent."""
    spent = 0.0
    for t, stream, i in advice.extension_order(p["targets"], have):
        reps = p["targets"][t]["reps"]
        if spent + run_cost(reps) > limit + 1e-9:
            break
        paths, _, cfg = trials[t]
        took = run_one(bench, t, stream, i, paths, cfg, reps)
        spent += 1 if unit == "runs" else took
        have_reps = advice.repetitions_of(core.load_set(paths[stream][-1]))
        if reps and have_reps < reps:  # a set kept by --reuse from another plan
            raise InputError(f"{paths[stream][-1]}: {have_reps} repetitions, the advice needs "
                             f"{reps}: use a new --out")
    return spent


def judge_followed(bench, trials, followed):
    """Each followed case's verdict on its advised runs a side (one compare per trial and window
    of runs): advice.result records."""
    out = []
    for t, (paths, work, _) in enumerate(trials):
        mine = [c for c in followed if c["trial"] == t]
        for first, k in sorted({(c["first"], c["runs"]) for c in mine}):
            at_k = [c for c in mine if (c["first"], c["runs"]) == (first, k)]
            aa, sv, counted = compare_trial(bench, t, paths, work, k, {c["kind"] for c in at_k},
                                            first)
            out += [advice.result(c, aa if c["kind"] == "aa" else sv, counted) for c in at_k]
    return out


def mode_advice(bench, args):
    have, limit, unit = args.runs, args.budget, args.budget_unit
    trials = [run_trial(bench, t, have) for t in range(args.trials)]
    before, cands = first_look(bench, trials, have)
    run_cost, note = run_cost_of(bench, args, trials)
    p = advice.plan(cands, have, limit, run_cost)
    spent = extend(bench, trials, p, have, limit, run_cost, unit)
    present = {t: {s: len(tr[0][s]) for s in runs.STREAMS} for t, tr in enumerate(trials)}
    followed, unreached = advice.reached(p["followed"], present)
    results = judge_followed(bench, trials, followed)
    added = {t: sum(n.values()) - 3 * have for t, n in present.items()}
    lines = [f"{args.trials} trial(s) of {have} runs a side (A, B, S alternated), then the "
             f"advice of the cases UNKNOWN there", advice.budget_line(p, limit, unit, have, note),
             f"spent {budget_spent(spent, unit)}" + (f"; {len(unreached)} followed cases not "
                                                     "reached (the budget ran out)"
                                                     if unreached else ""), ""]
    lines += advice.case_table(results, p, unreached) + [""]
    lines += advice.trial_table(results, before, added) + [""]
    lines += [advice.shortfall(results, k) for k in ("shift", "aa")]
    g, ok = advice.goals(results, {t: b["aa"]["DIFFERENT"] for t, b in before.items()})
    return lines + g, ok


def budget_spent(spent, unit):
    return f"{spent:.0f} runs" if unit == "runs" else f"{spent:.0f} s"


MODES = {"aa": mode_aa, "shift": mode_shift, "until-decided": mode_until_decided, "ab": mode_ab,
         "runs": mode_runs, "advice": mode_advice}


def parse(argv):
    ap = inputs.ArgumentParser(prog="python3 -m runners.aabench",
                                 description=" ".join(__doc__.split("\n\n")[0].split()),
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 usage="%(prog)s MODE [options] [-- RUN ARGS...]")
    ap.add_argument("mode", choices=sorted(MODES))
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "power.json"))
    ap.add_argument("--out", help="folder for the sets, logs and summary.txt "
                    "(default results/power-MODE-<UTC time>)")
    ap.add_argument("--reuse", action="store_true",
                    help="keep result sets already in --out (re-analyse without re-running)")
    ap.add_argument("--pairs", type=int, default=None,
                    help="aa, ab: pairs (default 10); until-decided: rounds (default 1)")
    ap.add_argument("--rounds", type=int, default=1, help="shift: rounds of A, 5%%, 10%% runs")
    ap.add_argument("--base", help="shift: the A set of the first round (else it is run)")
    ap.add_argument("--looks", type=int, default=10, help="until-decided: --looks (default 10)")
    ap.add_argument("--budget", help="until-decided: --budget s (default 300); advice (required): "
                    "what the runs the advice adds may spend, seconds (600 or 600s) or runs "
                    "(40runs)")
    ap.add_argument("--base-repetitions", type=int, default=None,
                    help="until-decided: repetitions of the A run (default the config's; SAME "
                    "may need more in the baseline than a batch)")
    ap.add_argument("--calibration-pairs", type=int, default=None,
                    help="aa, shift, until-decided, runs: A/A pairs run first for the noise floor "
                    "(default 1; 0: no floor); advice: default 0 (the run level needs none)")
    ap.add_argument("--trials", type=int, default=10, help="runs, advice: trials (default 10)")
    ap.add_argument("--runs", type=int, default=6,
                    help="runs, advice: runs a side per trial (default 6; advice: the runs the "
                    "advice is taken at, >= 2)")
    ap.add_argument("--spec", help="ab: the --ab SPEC (default sysctl:kernel.sched_rr_timeslice_ms"
                    " with its current value on both sides)")
    argv = list(sys.argv[1:] if argv is None else argv)
    run_args = argv[argv.index("--") + 1:] if "--" in argv else []
    args = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    args.run_args = run_args  # after --: extra arguments to every wakebench run
    if args.pairs is None:
        args.pairs = 1 if args.mode == "until-decided" else 10
    if args.calibration_pairs is None:
        args.calibration_pairs = 0 if args.mode == "advice" else 1
    why = bad_numbers(args)
    if why:
        ap.error(why)  # one line, before any run: a run can take minutes
    if args.out is None:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        args.out = os.path.join("results", f"power-{args.mode}-{stamp}")
    return args


def bad_numbers(args):
    """What is wrong with the numbers given, in a phrase, or "" (--looks and --budget as
    `wakebench run --until-decided` takes them: runners/run/options.cpp)."""
    if min(args.pairs, args.rounds, args.trials, args.runs) < 1 or args.calibration_pairs < 0:
        return "--pairs, --rounds, --trials and --runs must be >= 1, --calibration-pairs >= 0"
    if not 1 <= args.looks <= 100:
        return f"--looks {args.looks}: not in [1, 100]"
    why = budget_of(args)
    if why:
        return why
    if args.mode == "advice" and args.runs < 2:
        return f"--runs {args.runs}: advice is taken at the run level, >= 2 runs a side"
    if args.base_repetitions is not None and args.base_repetitions < 1:
        return f"--base-repetitions {args.base_repetitions}: not a positive count"
    return ""


def budget_of(args):
    """Sets args.budget (a number) and args.budget_unit ("s" or "runs") from --budget; returns
    what is wrong with it, in a phrase, or ""."""
    if args.budget is None:
        if args.mode == "advice":
            return f"advice needs --budget for the runs it adds: {advice.BUDGET_FORMS}"
        args.budget = "300"
    try:
        args.budget, args.budget_unit = advice.parse_budget(args.budget)
    except ValueError as e:
        return str(e)
    if args.budget_unit == "runs" and args.mode != "advice":
        return f"--budget {args.budget}runs: only advice takes a budget in runs (else seconds)"
    return ""


def main(argv=None):
    args = parse(argv)
    start = time.monotonic()
    try:
        core.load_json(args.config, "config")
        if args.base:
            core.load_set(args.base)
        bench = Bench(args)
        floor = []
        if args.mode != "ab" and args.calibration_pairs > 0:
            floor = [calibrate(bench, args.calibration_pairs), ""]
        lines, met = MODES[args.mode](bench, args)
        lines = floor + lines
    except InputError as e:
        print(f"aabench: {e}", file=sys.stderr)
        return 2
    header = [f"{args.mode}: `wakebench run --config {os.path.relpath(args.config, ROOT)}"
              + (" " + " ".join(args.run_args) if args.run_args else "") + "`",
              f"machine {socket.gethostname()} ({os.cpu_count()} CPUs), finished "
              f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC after "
              f"{(time.monotonic() - start) / 60:.1f} min", ""]
    text = "\n".join(x for line in header + lines
                     for x in (textwrap.wrap(line, 100, subsequent_indent="  ") or [""])) + "\n"
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
