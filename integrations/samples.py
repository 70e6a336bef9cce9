"""What mmtests and LKP take from a wakebench result set: per case that ran and per metric, the
value of each repetition that `wakebench compare` tests (marked repetitions left out), read through
the lab's one reader of a result set (runners/lab/wblab/resultset.py), so neither engine's parse
reads the set's layout itself. Metrics are compare's ids (`--metric`): any statistic a repetition
keeps, `median` and `p99` of the RTT in ns (printed in us), `tps` (higher is better).

  samples.py mmtests METRIC SET.json  mmtests' parse-results lines, one per repetition:
                                      METRIC<TAB>CASE<TAB>_<TAB>REPETITION<TAB>VALUE<TAB>_
  samples.py lkp SET.json             LKP's stats lines, per case and metric: the repetitions'
                                      mean (CASE.median_us: 75.8) and, from 2 of them, their
                                      sample sd in percent of it (CASE.median_us_stddev%: 3.1)

A set that is no readable result set is one line on stderr, exit status 2, nothing on stdout:
the set is read by the input rules both readers hold (docs/result-set.md#input-rules), so its
case names cannot hold the tab or the line break that would add a row to either engine's format,
and each writer refuses such a field again before it writes."""
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "runners" / "lab"))
sys.dont_write_bytecode = True  # the engines run it in place: no __pycache__ in the tree

from wblab import LabError, inputs, resultset  # noqa: E402  (found through the path above)

LKP_METRICS = ("median", "p99", "tps")  # what the LKP program reports of every case


@dataclass(frozen=True)
class Samples:
    case: str  # the case's name: "pipe/threads/llc", "binder-like/processes/llc/w2s4"
    metric: str
    repetitions: tuple  # of (1-based repetition number, value in the metric's unit)


def unit(metric):
    """The unit a metric is printed in: tps as it is, every other statistic (ns) in us."""
    return "tps" if metric == "tps" else "us"


def in_unit(metric, value):
    return value if metric == "tps" else value / 1000


def case_samples(rs, metric):
    """Per case that ran, the value of `metric` of each repetition compare tests; a case with none
    (not ok, every repetition marked, or the metric not recorded) is left out."""
    out = []
    for case in rs.cases:
        kept = tuple((i, in_unit(metric, r.stats[metric]))
                     for i, r in enumerate(case.repetitions, 1)
                     if case.ok and not r.marked and metric in r.stats)
        if kept:
            out.append(Samples(case.name, metric, kept))
    return out


def number(v):
    """A value as both engines read it: fixed point, no exponent (LKP takes "1e+05" for 1)."""
    if not math.isfinite(v):
        raise LabError(f"{v} is not a finite number: it cannot be written")
    return f"{v:.4f}".rstrip("0").rstrip(".")


def field(s):
    """`s` as one field of a row: a name (inputs.is_safe_name) holds no tab, line break, space or
    ": ", the separators of mmtests' table and LKP's `key: value` lines."""
    if not inputs.is_safe_name(s):
        raise LabError(f"{inputs.json_text(s)} cannot be written as a field of a row: "
                       f"{inputs.name_fault(s)}")
    return s


def mmtests_lines(samples):
    """mmtests' parse-results format (ExtractShellpack.pm): METRIC, factor A (the case), factor B,
    the interval (the repetition), the value, extra; tab-separated. Its sub-heading reads
    METRIC-CASE."""
    return [f"{field(s.metric)}\t{field(s.case)}\t_\t{i}\t{number(v)}\t_" for s in samples
            for i, v in s.repetitions]


def lkp_lines(samples):
    """LKP's `key: value` stats (sbin/dump-stat prefixes the program's name)."""
    out = []
    for s in samples:
        key = field(s.case + "." + (s.metric if s.metric == "tps" else
                                    f"{s.metric}_{unit(s.metric)}"))
        values = [v for _, v in s.repetitions]
        mean = math.fsum(v / len(values) for v in values)  # no sum beyond a double
        out.append(f"{key}: {number(mean)}")
        if len(values) >= 2 and mean > 0:
            out.append(f"{key}_stddev%: {number(100 * (statistics.stdev(values) / mean))}")
    return out


def lines(engine, metric, path):
    rs = resultset.load(path)
    if engine == "lkp":
        return lkp_lines([s for m in LKP_METRICS for s in case_samples(rs, m)])
    if not any(metric in r.stats for c in rs.cases for r in c.repetitions):
        raise LabError(f"{path}: no repetition records the metric \"{metric}\"")
    return mmtests_lines(case_samples(rs, metric))


USAGE = "usage: samples.py mmtests METRIC SET.json | samples.py lkp SET.json"


def main(argv):
    engine = argv[0] if argv else ""
    args = argv[1:]
    if (engine, len(args)) not in (("mmtests", 2), ("lkp", 1)):
        print(USAGE, file=sys.stderr)
        return 2
    metric, path = (args[0], args[1]) if engine == "mmtests" else (None, args[0])
    try:
        if metric is not None:
            inputs.check_name("METRIC", metric)
        text = "".join(line + "\n" for line in lines(engine, metric, path))
    except LabError as e:
        print(f"wakebench {engine} parse: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
