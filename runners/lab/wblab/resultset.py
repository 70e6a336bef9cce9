"""The lab's one reader of a wakebench result set (docs/result-set.md): a file, or the bytes a guest
sent back, checked against docs/result-set.schema.json (the schema the C++ reader's tests hold
wakebench's sets to) and typed into the records below. Errors are LabError in one line naming the
file. `predictions` and a case's `trace`, open JSON to the schema (common/schema/result_set_doc.h
lists them), are typed by wblab/predictions.py, their one reader. Kept as dicts, because they are
open JSON by nature: `environment` and a case's `observed.cpus`; and `doc`, the document as read,
which the lab labels (guest.label_results) before it writes the set again."""
import json
from dataclasses import dataclass, field

from . import REPO, LabError, inputs
from .predictions import Predictions, Trace, case_key, parse as parse_predictions, parse_trace

SCHEMA = json.loads((REPO / "docs" / "result-set.schema.json").read_text())
NAME = SCHEMA["properties"]["schema"]["enum"][0]  # "wakebench-results"
VERSIONS = SCHEMA["properties"]["schema_version"]["enum"]  # the versions this lab reads

# The JSON types of the schema's subset, as Python reads them (a bool is no number here).
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
         "integer": int, "number": (int, float)}


@dataclass(frozen=True)
class Repetition:
    ab_round: int | None  # `ab.round` in a set of `run --ab`, else None
    read_back: dict  # `ab.read_back`: knob -> its value read back ({} when not recorded)
    # Its statistics by name, the numbers the schema keeps beside the typed blocks: "median",
    # "p99", "wakeup-median", "tps" (ns, tps in round trips or transactions per second); a null
    # one (tps where no span was measured) is left out.
    stats: dict = field(default_factory=dict)
    marked: bool = False  # it timed syscalls, not wakeups: compare leaves it out of its tests
    classes: dict = field(default_factory=dict)  # kernel placement: class -> its round trips


@dataclass(frozen=True)
class Case:
    name: str
    mechanism: str
    mode: str
    placement: str  # "llc", "kernel", "kernel:llc", "kernel:0,2-3", "cpu:3,7"
    status: str  # ok, skipped or failed
    reason: str | None
    cpus: tuple | None  # (waker, wakee) when both are recorded
    rtt_median_ns: float | None
    repetitions: tuple  # of Repetition
    histogram: dict  # `observed.histogram`: class -> round trips ({} when not observed)
    observed_cpus: dict | None  # `observed.cpus`: {"waker": {cpu: round trips}, "wakee": ...}
    trace: Trace | None  # the wakeup paths of a traced kernel case
    work_ns: int | None = None  # `params.work_ns`
    counters: dict | None = None  # {"waker": {event: per round trip}, "wakee": ..., "unavailable"}

    @property
    def ok(self):
        return self.status == "ok"

    @property
    def kernel(self):
        return self.placement.startswith("kernel")


@dataclass(frozen=True)
class AbSet:
    setting: int
    settings: int
    values: dict  # knob -> its value in this setting


@dataclass(frozen=True)
class ResultSet:
    where: str  # the file, for messages
    schema_version: int
    complete: bool
    cases: tuple  # of Case
    environment: dict  # open ({} when absent)
    predictions: Predictions | None  # None: the set has none
    ab: AbSet | None
    topology_xml: str | None
    topology_pus: int | None  # topology.counts.pus
    doc: dict  # the document as read


def kind(v):
    """The JSON type of `v`, in the schema's words."""
    return next(t for t in ("null", "boolean", "integer", "number", "string", "array", "object")
                if is_type(v, t))


def is_type(v, t):
    return isinstance(v, TYPES[t]) and (t == "boolean" or not isinstance(v, bool))


def violation(v, schema, at="$"):
    """Where and how `v` breaks `schema` (the subset of docs/result-set.schema.json's
    description), in one line; None when it does not."""
    if "$ref" in schema:
        schema = SCHEMA["$defs"][schema["$ref"].removeprefix("#/$defs/")]
    types = schema.get("type")
    types = [types] if isinstance(types, str) else types
    if types and not any(is_type(v, t) for t in types):
        return f"{at} is {kind(v)}, not {' or '.join(types)}"
    if "enum" in schema and not any(v == e and kind(v) == kind(e) for e in schema["enum"]):
        return f"{at} is {json.dumps(v)[:40]}, not one of {json.dumps(schema['enum'])}"
    if isinstance(v, list) and "items" in schema:
        return items_violation(v, schema["items"], at)
    return violation_in_object(v, schema, at) if isinstance(v, dict) else None


def items_violation(v, items, at):
    if list(items) == ["type"] and isinstance(items["type"], str) and \
            all(is_type(x, items["type"]) for x in v):  # a histogram's thousands of counts
        return None
    return next(filter(None, (violation(x, items, f"{at}[{i}]") for i, x in enumerate(v))), None)


def violation_in_object(v, schema, at):
    missing = [k for k in schema.get("required", []) if k not in v]
    if missing:
        return f"{at}: missing \"{missing[0]}\""
    props, extra = schema.get("properties", {}), schema.get("additionalProperties", True)
    for k, x in v.items():
        sub = props.get(k, extra)
        if sub is False:
            return f"{at}: unknown key \"{k}\""
        why = violation(x, sub, f"{at}.{k}") if isinstance(sub, dict) else None
        if why:
            return why
    return None


def load(path):
    """The result set in file `path` (stdin when "-"), read by the input rules (inputs.py)."""
    return parse(inputs.read_bytes(path, "result set"), str(path))


def parse(data, where):
    """The result set in `data` (the file's bytes or text, or the document already parsed);
    `where` names it in errors. Past the schema, a set holds to the C++ reader's rules: names
    made of [A-Za-z0-9._:,=/+-], free text without control characters, positive medians."""
    doc = inputs.parse_json(data, "result set", where) if isinstance(data, (bytes, str)) \
        else data
    check_header(doc, where)
    why = violation(doc, SCHEMA)
    if why:
        raise LabError(f"{where}: {why}")
    try:
        for at, name in names(doc):
            inputs.check_name(at, name)
        inputs.check_texts(doc, skip=("topology.xml",))  # a document for hwloc only
        check_medians(doc["cases"])
        return typed(doc, where)
    except (LabError, ValueError) as e:  # ValueError: predictions.py's, naming the key path
        raise LabError(f"{where}: {e}") from None


def keyed(at, obj, values=True):
    """(place, name) of each key of `obj` (a dict, else nothing), and of each string value."""
    for k, v in (obj.items() if isinstance(obj, dict) else ()):
        yield f"{at} key", k
        if values and isinstance(v, str):
            yield f"{at}.{k}", v


def flat_strings(at, v):
    """(place, string) of every string inside `v`."""
    if isinstance(v, str):
        yield at, v
    for k, x in (v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list)
                 else ()):
        yield from flat_strings(f"{at}.{k}" if isinstance(k, str) else f"{at}[{k}]", x)


def names(doc):
    """(place, name) of every name a set holds where the C++ reader checks it (case_view.cpp,
    resultset_io.cpp, result_set_doc.cpp: is_safe_name): host, --ab, case and prediction names."""
    for block, key in (("environment", "hostname"), ("context", "host_name"), ("ab", "id"),
                       ("ab", "label")):
        v = (doc.get(block) or {}).get(key) if isinstance(doc.get(block), dict) else None
        if isinstance(v, str):
            yield f"{block}.{key}", v
    yield from keyed("ab.values", (doc.get("ab") or {}).get("values"))
    for i, c in enumerate(doc["cases"]):
        yield from case_names(f"cases[{i}]", c)
    entries = prediction_cases(doc.get("predictions"))
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        yield from prediction_names(f"predictions.cases[{i}]", entry)


def case_names(at, c):
    for key in ("name", "mechanism", "placement"):
        yield f"{at}.{key}", c[key]
    yield from flat_strings(f"{at}.params", c.get("params"))
    yield from keyed(f"{at}.observed.histogram", (c.get("observed") or {}).get("histogram"))
    counters = c.get("counters") or {}
    for side in ("waker", "wakee", "unavailable"):
        yield from keyed(f"{at}.counters.{side}", counters.get(side), values=False)
    for j, r in enumerate(c.get("repetitions") or []):
        yield from keyed(f"{at}.repetitions[{j}].classes", r.get("classes"), values=False)
        yield from keyed(f"{at}.repetitions[{j}].ab.read_back",
                         (r.get("ab") or {}).get("read_back"))


def prediction_names(at, entry):
    """An entry's case, mechanism, mode and placement, and every key inside it (policies,
    classes) but array indexes."""
    if not isinstance(entry, dict):
        raise LabError(f"{at} is not an object")
    for key in ("case", "mechanism", "mode", "placement"):
        if isinstance(entry.get(key), str):
            yield f"{at}.{key}", entry[key]
    stack = [(at, entry)]
    while stack:
        where, v = stack.pop()
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, x in items:
            if isinstance(k, str):
                yield f"{where} key", k
            stack.append((f"{where}.{k}" if isinstance(k, str) else f"{where}[{k}]", x))


def check_medians(cases):
    """The RTT median of an ok case and of each of its repetitions, where given, is positive."""
    for i, c in enumerate(cases):
        if c["status"] != "ok":
            continue
        medians = [(f"cases[{i}].rtt_ns.median", (c.get("rtt_ns") or {}).get("median"))]
        medians += [(f"cases[{i}].repetitions[{j}].median", r.get("median"))
                    for j, r in enumerate(c.get("repetitions") or [])]
        for at, m in medians:
            if m is not None and not m > 0:
                raise LabError(f"{at} is {m}, not a positive number")


def check_header(doc, where):
    """What makes a document a result set of a version this lab reads."""
    if not isinstance(doc, dict) or doc.get("schema") != NAME:
        raise LabError(f"{where}: not a wakebench result set (no \"schema\": \"{NAME}\")")
    version = doc.get("schema_version")
    if version not in VERSIONS or not is_type(version, "integer"):
        raise LabError(f"{where}: schema_version {json.dumps(version)} is not supported (the lab "
                       f"reads versions {VERSIONS[0]} to {VERSIONS[-1]})")


def typed(doc, where):
    """The records of a document that holds to the schema."""
    ab = doc.get("ab")
    topology = doc.get("topology") or {}
    return ResultSet(where=where, schema_version=doc["schema_version"],
                     complete=doc.get("complete", True),
                     cases=tuple(typed_case(c, f"cases[{i}]")
                                 for i, c in enumerate(doc["cases"])),
                     environment=doc.get("environment") or {},
                     predictions=parse_predictions(doc.get("predictions")),
                     ab=AbSet(ab["setting"], ab["settings"], ab["values"]) if ab else None,
                     topology_xml=topology.get("xml"),
                     topology_pus=(topology.get("counts") or {}).get("pus"), doc=doc)


def typed_case(c, at):
    cpus = c.get("cpus") or {}
    observed = c.get("observed") or {}
    return Case(name=c["name"], mechanism=c["mechanism"], mode=c["mode"],
                placement=c["placement"], status=c["status"], reason=c.get("reason"),
                cpus=(cpus["waker"], cpus["wakee"])
                if cpus.get("waker") is not None and cpus.get("wakee") is not None else None,
                rtt_median_ns=(c.get("rtt_ns") or {}).get("median"),
                repetitions=tuple(typed_repetition(r) for r in c.get("repetitions") or []),
                histogram=observed.get("histogram") or {},
                observed_cpus=observed.get("cpus"),
                trace=parse_trace(c.get("trace"), f"{at}.trace"),
                work_ns=(c.get("params") or {}).get("work_ns"), counters=c.get("counters"))


def typed_repetition(r):
    ab = r.get("ab") or {}
    return Repetition(ab.get("round"), ab.get("read_back") or {},
                      stats={k: v for k, v in r.items() if is_type(v, "number")},
                      marked=r.get("marked", False),
                      classes={c: v["round_trips"] for c, v in (r.get("classes") or {}).items()})


def prediction_cases(pred):
    """The per-case entries of a predictions block as the document holds them, for the name rules
    that run before it is typed (predictions.parse)."""
    pred = pred or {}
    return pred.get(case_key(pred), [])
