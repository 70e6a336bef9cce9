"""The lab's one reader of the policy predictions: a result set's `predictions` block and
`wakebench predict --results --json` (predict.json), which analysis/predict/predict_render.cpp
writes alike (to_json, case_json_of, policy_json, group_json, measured_json), and a traced case's
`trace` (common/schema/wakeup_trace.cpp: trace_json; docs/result-set.md#trace). Each is typed once,
at the edge, into the frozen records below; bad input is one ValueError naming the key path
("predictions.cases[3].policies.mainline.classes: expected an object").

Like the C++ TraceView, the records keep what the lab reads: the entries' `params`,
`pinned_rtt_ns`, `busy`, `classes`, `replay`, a policy's `first_paths`, `predicted_rtt_ns`,
`unpriced` and `uncertain.bounds`, and the block's `premises`, `sched_features`, `model_kernel`
and `fair_placement` are not typed here. A key older sets lack reads as the default its field
names (None: absent); JSON null reads as absent. Where sets before the verdict words (schema
versions 1 and 2) held something else under a key, it reads as absent: a group's bare `distance`
number and a `consistent_with` sentence (docs/result-set.md#predictions, last paragraph)."""
import json
from dataclasses import dataclass, field

from . import LabError, inputs

# The JSON types the records hold, as Python reads them (a bool is no number here).
KINDS = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int,
         "number": (int, float)}


def expect(v, kind, at):
    """`v` when it is of JSON type `kind`, else ValueError "<at>: expected an object"."""
    if not isinstance(v, KINDS[kind]) or (kind != "boolean" and isinstance(v, bool)):
        raise ValueError(f"{at}: expected {'an' if kind[0] in 'aeio' else 'a'} {kind}")
    return v


def get(obj, key, at, kind, required=False):
    """`obj[key]` of JSON type `kind`; None when absent or null, unless `required`."""
    v = obj.get(key)
    if v is None and required:
        raise ValueError(f"{at}: missing \"{key}\"")
    return None if v is None else expect(v, kind, f"{at}.{key}")


def typed_map(v, at, kind):
    """{name: value of JSON type `kind`} (a class distribution, counts by class or path)."""
    return {k: expect(x, kind, f"{at}.{k}") for k, x in expect(v, "object", at).items()}


def get_map(obj, key, at, kind, required=False):
    """`obj[key]` as typed_map(), None when absent (unless `required`)."""
    v = get(obj, key, at, "object", required)
    return None if v is None else typed_map(v, f"{at}.{key}", kind)


def array(obj, key, at, kind, required=False):
    """`obj[key]` as a tuple of JSON values of type `kind`, None when absent (unless
    `required`)."""
    v = get(obj, key, at, "array", required)
    return None if v is None else tuple(expect(x, kind, f"{at}.{key}[{i}]")
                                        for i, x in enumerate(v))


def items(obj, key, at):
    """(its place, each object) of the array of objects `obj[key]`; none when absent."""
    return [(f"{at}.{key}[{i}]", x) for i, x in enumerate(array(obj, key, at, "object") or ())]


def counts_of(obj, key, at, names):
    """The counts `names` of the object `obj[key]`, 0 where absent (the C++ TraceView's
    default: a count a set predates reads as 0)."""
    sub = get(obj, key, at, "object") or {}
    return [get(sub, n, f"{at}.{key}", "integer") or 0 for n in names]


@dataclass(frozen=True)
class Move:
    """A traced wakeup that moved the wakee (`first_moves`); `from` is from_cpu."""
    run: int
    wake: int
    waker_cpu: int
    from_cpu: int
    to: int
    path: str


@dataclass(frozen=True)
class Spread:
    """`since_switch_out_us.kept|moved`: the wakes and their percentiles (None when n is 0)."""
    n: int
    p5: float | None
    p50: float | None
    p95: float | None


@dataclass(frozen=True)
class Trace:
    """A case's `trace`. `unavailable` holds why the case has no counts (then nothing else is
    read); else `paths` is required. A count absent from an older set, or from predict's
    `measured.trace` (which keeps wakeups, paths, dropped and classes_by_path only), reads as 0,
    as the C++ TraceView reads it; an absent map as None."""
    unavailable: str | None = None
    paths: dict = field(default_factory=dict)  # path -> wakeups
    wakeups: int = 0
    moved: int = 0
    dropped: int = 0
    unmatched: int = 0
    classes_by_path: dict | None = None  # path -> {class: wakeups}
    moved_by_class: dict | None = None  # class -> wakeups
    foreign: tuple = (0, 0)  # `foreign.wakeups`, `foreign.moved`
    stacked: tuple = (0, 0)  # `stacked.wakes`, `stacked.waker_preempted`
    migrations: tuple = (0, 0)  # `migrations.at_wakeup`, `migrations.other`
    since_switch_out_us: dict | None = None  # "kept" | "moved" -> Spread
    first_moves: tuple | None = None  # of Move; None: a wakebench before them

    @property
    def counted(self):
        return self.unavailable is None


def parse_trace(v, at="trace"):
    """The Trace of a `trace` block; None when null (the case was not traced)."""
    if v is None:
        return None
    t = expect(v, "object", at)
    if "unavailable" in t:
        return Trace(unavailable=get(t, "unavailable", at, "string", required=True))
    by = get(t, "classes_by_path", at, "object")
    return Trace(
        paths=get_map(t, "paths", at, "integer", required=True),
        **{k: get(t, k, at, "integer") or 0 for k in ("wakeups", "moved", "dropped", "unmatched")},
        classes_by_path=None if by is None else {
            p: typed_map(c, f"{at}.classes_by_path.{p}", "integer") for p, c in by.items()},
        moved_by_class=get_map(t, "moved_by_class", at, "integer"),
        foreign=tuple(counts_of(t, "foreign", at, ("wakeups", "moved"))),
        stacked=tuple(counts_of(t, "stacked", at, ("wakes", "waker_preempted"))),
        migrations=tuple(counts_of(t, "migrations", at, ("at_wakeup", "other"))),
        since_switch_out_us=spreads(t, at),
        first_moves=None if t.get("first_moves") is None else tuple(
            move(m, w) for w, m in items(t, "first_moves", at)))


def spreads(t, at):
    by = get(t, "since_switch_out_us", at, "object")
    if by is None:
        return None
    at = f"{at}.since_switch_out_us"
    return {k: spread(expect(s, "object", f"{at}.{k}"), f"{at}.{k}") for k, s in by.items()}


def spread(s, at):
    return Spread(get(s, "n", at, "integer", required=True),
                  *(get(s, p, at, "number") for p in ("p5", "p50", "p95")))


def move(m, at):
    return Move(*(get(m, k, at, "integer", required=True)
                  for k in ("run", "wake", "waker_cpu", "from", "to")),
                get(m, "path", at, "string", required=True))


@dataclass(frozen=True)
class Cause:
    """An alternative's `cause`: its kind and sentence, and the CPUs it names (None: not named)."""
    kind: str
    text: str
    waker: int | None = None
    busy: int | None = None
    from_cpu: int | None = None
    to: int | None = None
    after_reversed: tuple | None = None  # (from, to)

    def to_json(self):
        """The cause as predict writes it (keys in its order: alphabetical)."""
        reversed_ = None if self.after_reversed is None else list(self.after_reversed)
        out = {"after_reversed": reversed_, "busy": self.busy, "from": self.from_cpu,
               "kind": self.kind, "text": self.text, "to": self.to, "waker": self.waker}
        return {k: v for k, v in out.items() if v is not None}


def parse_cause(obj, at):
    """`obj["cause"]`, required."""
    c = get(obj, "cause", at, "object", required=True)
    at = f"{at}.cause"
    return Cause(get(c, "kind", at, "string", required=True),
                 get(c, "text", at, "string", required=True),
                 *(get(c, k, at, "integer") for k in ("waker", "busy", "from", "to")),
                 array(c, "after_reversed", at, "integer"))


@dataclass(frozen=True)
class Alternative:
    """One of a policy's `uncertain.alternatives`: another steady state the pair can settle in."""
    cause: Cause
    classes: dict  # class -> share
    cpus: tuple | None


@dataclass(frozen=True)
class Explanation:
    """One `explained_by` item: an alternative of the closest mix, its weight and evidence."""
    alternative: int
    weight: float
    cause: Cause
    evidence: str | None = None  # None: the trace shows nothing of the cause

    def to_json(self):
        out = {"alternative": self.alternative, "cause": self.cause.to_json(),
               "evidence": self.evidence, "weight": self.weight}
        return {k: v for k, v in out.items() if v is not None}


@dataclass(frozen=True)
class Distance:
    """A fit of the measured classes (`distance`). The lab's trimmed fixtures carry `strict`
    alone: the others are None ((): weights) when absent."""
    strict: float
    best: float | None = None
    share: float | None = None
    alternative: int | None = None  # None: the steady state alone (or absent)
    weights: tuple = ()


def parse_distance(obj, at):
    """`obj["distance"]`: a Distance; None when absent or, in sets before the verdicts, a bare
    number."""
    d = obj.get("distance")
    if d is None or (isinstance(d, (int, float)) and not isinstance(d, bool)):
        return None
    at = f"{at}.distance"
    d = expect(d, "object", at)
    return Distance(get(d, "strict", at, "number", required=True),
                    *(get(d, k, at, "number") for k in ("best", "share")),
                    get(d, "alternative", at, "integer"),
                    array(d, "weights", at, "number") or ())


@dataclass(frozen=True)
class PolicyModel:
    """One of an entry's `policies`: the model's steady state and how it fits the measurement."""
    classes: dict  # class -> share
    cpus: tuple | None = None
    settled: bool | None = None
    coverage: float | None = None
    alternatives: tuple = ()  # `uncertain.alternatives`, of Alternative
    uncertain: bool = False  # whether the policy is uncertain (has `uncertain`)
    distance: Distance | None = None  # None: no observed histogram
    verdict: str | None = None  # None: a wakebench before the verdicts
    explained_by: tuple | None = None  # of Explanation; EXPLAINED only


def parse_policy(p, at):
    p = expect(p, "object", at)
    u = get(p, "uncertain", at, "object")
    return PolicyModel(
        get_map(p, "classes", at, "number", required=True), array(p, "cpus", at, "integer"),
        get(p, "settled", at, "boolean"), get(p, "coverage", at, "number"),
        alternatives=tuple(alternative(a, w)
                           for w, a in items(u or {}, "alternatives", f"{at}.uncertain")),
        uncertain=u is not None, distance=parse_distance(p, at),
        verdict=get(p, "verdict", at, "string"),
        explained_by=None if p.get("explained_by") is None else tuple(
            explanation(x, w) for w, x in items(p, "explained_by", at)))


def alternative(a, at):
    return Alternative(parse_cause(a, at), get_map(a, "classes", at, "number", required=True),
                       array(a, "cpus", at, "integer"))


def explanation(x, at):
    return Explanation(get(x, "alternative", at, "integer", required=True),
                       get(x, "weight", at, "number", required=True), parse_cause(x, at),
                       get(x, "evidence", at, "string"))


@dataclass(frozen=True)
class Group:
    """One of an entry's `groups`: policies with one prediction, nearest first when observed."""
    name: str
    policies: tuple  # of policy ids
    classes: dict | None = None  # the group's steady state
    distance: Distance | None = None
    verdict: str | None = None


def parse_group(g, at):
    return Group(get(g, "name", at, "string", required=True),
                 array(g, "policies", at, "string", required=True),
                 get_map(g, "classes", at, "number"), parse_distance(g, at),
                 get(g, "verdict", at, "string"))


@dataclass(frozen=True)
class Measured:
    """An entry's `measured`: the kernel case's placements."""
    status: str | None = None
    histogram: dict = field(default_factory=dict)  # class -> round trips; {} when absent
    classes: dict = field(default_factory=dict)  # class -> share; {} when not observed
    migrations: dict | None = None  # {"waker", "wakee"}: round trips on another CPU
    trace: Trace | None = None  # paths, classes_by_path, wakeups, dropped only


def parse_measured(m, at):
    if m is None:
        return None
    m = expect(m, "object", at)
    return Measured(get(m, "status", at, "string"),
                    get_map(m, "histogram", at, "number") or {},
                    get_map(m, "classes", at, "number") or {},
                    get_map(m, "migrations", at, "number"),
                    parse_trace(m.get("trace"), f"{at}.trace"))


@dataclass(frozen=True)
class PredictionCase:
    """One entry of `cases` (`mechanisms` before schema version 4): a case's predictions.
    `case` is None in sets from before predictions were per case, `placement` in the earliest."""
    mechanism: str
    mode: str
    case: str | None = None
    placement: str | None = None
    skipped: str | None = None  # why the predictor does not model it (then nothing below)
    wake_flags: str | None = None
    start: tuple | None = None  # (waker, wakee) start CPUs
    allowed: str | None = None  # a CPU list, or "all"
    policies: dict = field(default_factory=dict)  # id -> PolicyModel
    measured: Measured | None = None  # None: no kernel case
    groups: tuple = ()  # of Group
    consistent_with: tuple | None = None  # the MATCH groups' names
    discriminates: tuple | None = None  # of (id, id); None: a wakebench before it
    discriminates_native: tuple | None = None  # the same without the emulation-only states

    def policy(self, pid):
        """Policy `pid`'s model, None when the entry has none."""
        return self.policies.get(pid)


def parse_case(e, at):
    e = expect(e, "object", at)
    policies = get(e, "policies", at, "object") or {}
    legacy = isinstance(e.get("consistent_with"), str)  # a sentence, before the verdict words
    return PredictionCase(
        *(get(e, k, at, "string", required=True) for k in ("mechanism", "mode")),
        *(get(e, k, at, "string") for k in ("case", "placement", "skipped", "wake_flags")),
        start=array(e, "start", at, "integer"), allowed=get(e, "allowed", at, "string"),
        policies={pid: parse_policy(p, f"{at}.policies.{pid}") for pid, p in policies.items()},
        measured=parse_measured(e.get("measured"), f"{at}.measured"),
        groups=tuple(parse_group(g, w) for w, g in items(e, "groups", at)),
        consistent_with=None if legacy else array(e, "consistent_with", at, "string"),
        discriminates=pairs(e, "discriminates", at),
        discriminates_native=pairs(e, "discriminates_native", at))


def pairs(e, key, at):
    """`e[key]`, policy pairs, as a tuple of (id, id); None when absent."""
    v = array(e, key, at, "array")
    return None if v is None else tuple(
        tuple(expect(x, "string", f"{at}.{key}[{i}][{j}]") for j, x in enumerate(p))
        for i, p in enumerate(v))


@dataclass(frozen=True)
class Domain:
    """One of `domains`: a sched domain the model built, per CPU and level bottom-up."""
    cpu: int
    level: int  # `domain`
    name: str  # "MC", "NUMA(20)"
    span: str  # a CPU list
    share_llc: bool | None  # SD_SHARE_LLC; None when absent


@dataclass(frozen=True)
class Predictions:
    """A predictions block or predict.json. `unavailable` holds why a set has none (then nothing
    else is read); the other scalars are None in sets from before they were written."""
    cases: tuple = ()  # of PredictionCase
    unavailable: str | None = None
    emulated: bool | None = None
    model: str | None = None  # the model's assumptions, one line
    topology: str | None = None
    match_distance: float | None = None
    no_prediction_coverage: float | None = None
    domains: tuple | None = None  # of Domain; None: a wakebench before the model printed them


def case_key(block):
    """The key of a block's per-case entries: "cases" from schema version 4, "mechanisms" before
    (analysis/results/resultset_io.h: prediction_cases)."""
    return "cases" if "cases" in block else "mechanisms"


def parse(doc, at="predictions"):
    """The Predictions of a block or predict.json; None when null (a set without predictions)."""
    if doc is None:
        return None
    d = expect(doc, "object", at)
    if "schema" in d:  # a whole document (a result set, a comparison) given for the block
        raise ValueError(f"{at}: a {json.dumps(d['schema'])[:40]} document, not predictions")
    if "unavailable" in d:
        return Predictions(unavailable=get(d, "unavailable", at, "string", required=True))
    return Predictions(
        cases=tuple(parse_case(e, w) for w, e in items(d, case_key(d), at)),
        emulated=get(d, "emulated", at, "boolean"), model=get(d, "model", at, "string"),
        topology=get(d, "topology", at, "string"),
        match_distance=get(d, "match_distance", at, "number"),
        no_prediction_coverage=get(d, "no_prediction_coverage", at, "number"),
        domains=None if d.get("domains") is None else tuple(
            domain(x, w) for w, x in items(d, "domains", at)))


def domain(x, at):
    return Domain(*(get(x, k, at, "integer", required=True) for k in ("cpu", "domain")),
                  *(get(x, k, at, "string", required=True) for k in ("name", "span")),
                  get(x, "share_llc", at, "boolean"))


def read(doc, where):
    """parse(doc), its error a LabError in one line naming `where`."""
    try:
        return parse(doc)
    except ValueError as e:
        raise LabError(f"{where}: {e}") from None


def load(path):
    """The predictions in the file `path` (predict.json), read by the input rules."""
    return read(inputs.load_json(path, "predictions"), str(path))
