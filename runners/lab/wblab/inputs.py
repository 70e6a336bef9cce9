"""The input rules (docs/result-set.md#input-rules) on the Python side: what common/util/input.h is
to the C++ commands, this module is to the Python edges (integrations/samples.py, wakebench-lab,
runners/aabench), and tests/fixtures/input-rules/table.json holds both to the same answers.

An input is a regular file, or stdin given as "-": a FIFO, device or folder is refused before a
byte is read (opened O_NONBLOCK, checked with fstat), a read that would block is refused, and at
most 256 MiB are read (WAKEBENCH_MAX_INPUT_MIB raises it). A JSON document nests at most 128
levels (checked before the parser recurses), holds finite numbers only (no NaN, Infinity or
1e999) and no key twice in one object. Names are made of [A-Za-z0-9._:,=/+-], at most 200
characters, no part between slashes empty, "." or ".."; free text holds no control character (C0,
DEL, C1). Every refusal is an InputError (a LabError: one line, exit status 2)."""
import argparse
import codecs
import json
import math
import os
import re
import select
import stat

from . import LabError

MAX_DEPTH = 128
MAX_NAME = 200
DEFAULT_MAX_MIB = 256
MAX_ENV = "WAKEBENCH_MAX_INPUT_MIB"
MAX_ENV_MIB = 1 << 20  # 1 TiB, as the C++ reader

NAME = re.compile(r"[A-Za-z0-9._:,=/+-]+")
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON string (to its end, or the end of the text) or a bracket: what the depth scan reads.
# What a number that overflows a double needs: 200 digits in a row, or an exponent of 100 or more
# (below both, a number is under 1e299).
BIG_NUMBER = re.compile(rb"[0-9]{200}|[eE]\+?0*[1-9][0-9]{2}")
TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.S)


class InputError(LabError):
    """One input refused, in one line."""


def json_text(s):
    """`s` as a JSON string literal safe to print: every control character (C0, DEL, C1) and
    every non-ASCII character escaped."""
    return json.dumps(s).replace("\x7f", "\\u007f")


def kind_of(mode):
    """What a file that is not a regular file is, in common/util/sys.h's words."""
    for test, word in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return word
    return "a special file"


def max_input_bytes():
    """The size limit: DEFAULT_MAX_MIB, or WAKEBENCH_MAX_INPUT_MIB (whole MiB) when set."""
    env = os.environ.get(MAX_ENV)
    if env is None:
        return DEFAULT_MAX_MIB << 20
    if not (env.isascii() and env.isdigit() and 1 <= int(env) <= MAX_ENV_MIB):
        raise InputError(f"{MAX_ENV} {json_text(env)}: expected a whole number of MiB in "
                         f"[1, {MAX_ENV_MIB}]")
    return int(env) << 20


def over_limit(is_larger):
    return (f"{is_larger} than the input limit of {max_input_bytes() >> 20} MiB ({MAX_ENV} "
            "raises it)")


class Refused(ValueError):
    """Why one input is refused, in one line, without saying which input (the caller does)."""


def read_fd(fd, limit, wait=False):
    """Everything `fd` holds up to its end; None when it holds more than `limit` bytes. A read
    that would block waits when `wait` (stdin), else is refused: a regular file whose read
    blocks (trace_pipe) is never whole."""
    chunks, size = [], 0
    while True:
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:
            if not wait:
                raise Refused("a read would block: not a file that can be read whole") from None
            select.select([fd], [], [])
            continue
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)


def read_file(path, limit):
    """The bytes of the regular file `path`: anything else is refused before a byte is read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as e:
        raise Refused(f"cannot open: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"is {kind_of(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise Refused(over_limit(f"is {st.st_size} bytes, larger"))
        data = read_fd(fd, limit)
    finally:
        os.close(fd)
    if data is None:
        raise Refused(over_limit("is larger"))
    return data


def read_stdin(limit):
    if stat.S_ISDIR(os.fstat(0).st_mode):
        raise Refused("stdin is a directory")
    data = read_fd(0, limit, wait=True)
    if data is None:
        raise Refused(over_limit("stdin is larger"))
    return data


def read_bytes(path, what="file", where=None):
    """The bytes of the regular file `path` (stdin when "-"), or InputError "<where>: not a
    readable <what> (<why>)", `where` the path unless given."""
    where = str(path) if where is None else where
    try:
        limit = max_input_bytes()
        return read_stdin(limit) if str(path) == "-" else read_file(str(path), limit)
    except Refused as e:
        raise InputError(f"{where}: not a readable {what} ({e})") from None
    except OSError as e:
        raise InputError(f"{where}: not a readable {what} (read error: {e.strerror})") from None


def too_deep_at(data):
    """The byte where the arrays and objects of `data` (bytes) first nest deeper than MAX_DEPTH,
    else None; brackets inside strings do not count (common/util/input.cpp: json_too_deep_at)."""
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
        return None
    depth = 0
    for m in TOKEN.finditer(data):
        ch = data[m.start()]
        if ch in b"[{":
            depth += 1
            if depth > MAX_DEPTH:
                return m.start()
        elif ch in b"]}":
            depth -= 1
    return None


def no_constant(word):
    raise Refused(f"invalid JSON: {word} is not a number")


def finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise Refused(f"invalid JSON: number overflow parsing '{text[:40]}'")
    return value


def finite_int(text):
    if len(text) > 300 and math.isinf(float(text)):  # beyond a double, as the C++ reader reads it
        raise Refused(f"invalid JSON: number overflow parsing '{text[:40]}'")
    return int(text)


def unique_keys(pairs):
    doc = dict(pairs)
    if len(doc) != len(pairs):
        seen = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise Refused(f"invalid JSON: duplicate key {json_text(dup)}")
    return doc


def has_lone_surrogate(v):
    """Whether a string or key of `v` holds a surrogate: an escape (\\ud800) with no pair."""
    if isinstance(v, str):
        return bool(SURROGATE.search(v))
    if isinstance(v, dict):
        return any(has_lone_surrogate(k) or has_lone_surrogate(x) for k, x in v.items())
    return isinstance(v, list) and any(has_lone_surrogate(x) for x in v)


def loads(data):
    """The JSON document in `data` (bytes or str) under the rules above, or Refused saying why in
    one line, as common/util/input.h's parse_input_json: "invalid JSON at byte 128: nested deeper
    than 128 levels", "invalid JSON: number overflow parsing '1e999'"."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    body = data.removeprefix(codecs.BOM_UTF8)  # skipped, as nlohmann skips it
    skipped = len(data) - len(body)
    at = too_deep_at(body)
    if at is not None:
        raise Refused(f"invalid JSON at byte {at + skipped}: nested deeper than {MAX_DEPTH} "
                      "levels")
    try:
        text = body.decode("utf-8")
        numbers = {"parse_float": finite_float, "parse_int": finite_int} \
            if BIG_NUMBER.search(body) else {}  # else none can overflow: no call per number
        doc = json.loads(text, parse_constant=no_constant, object_pairs_hook=unique_keys,
                         **numbers)
    except UnicodeDecodeError as e:
        raise Refused(f"invalid JSON at byte {e.start + skipped}: not UTF-8") from None
    except json.JSONDecodeError as e:
        byte = len(text[:e.pos].encode("utf-8", "surrogatepass")) + skipped
        end = " (end of file: truncated?)" if byte >= len(data) else ""
        raise Refused(f"invalid JSON at byte {byte}{end}: {e.msg}") from None
    if re.search(rb"\\u[dD][89a-fA-F]", body) and has_lone_surrogate(doc):
        raise Refused("invalid JSON: a \\u escape of a surrogate with no pair")
    return doc


def parse_json(data, what="JSON document", where="input"):
    """loads(data), or InputError "<where>: not a readable <what> (invalid JSON ...)"."""
    try:
        return loads(data)
    except Refused as e:
        raise InputError(f"{where}: not a readable {what} ({e})") from None


def load_json(path, what="JSON document", where=None):
    """The JSON document in the file `path` (stdin when "-") under every rule above."""
    where = str(path) if where is None else where
    return parse_json(read_bytes(path, what, where), what, where)


def name_fault(s):
    """Why `s` cannot be a name, or None when it can (common/util/input.h: is_safe_name)."""
    if not isinstance(s, str) or not s or len(s) > MAX_NAME:
        return f"is empty or longer than {MAX_NAME} characters"
    if not NAME.fullmatch(s):
        return "has a character outside [A-Za-z0-9._:,=/+-]"
    if any(part in ("", ".", "..") for part in s.split("/")):
        return 'has an empty, "." or ".." part between slashes'
    return None


def is_safe_name(s):
    return name_fault(s) is None


def check_name(what, s):
    """InputError "<what> "<s>" <fault>" unless `s` is a name."""
    fault = name_fault(s)
    if fault:
        raise InputError(f"{what} {json_text(s)} {fault}")


def is_text(s):
    """Whether `s` is free text: no control character (C0, DEL, C1) and no lone surrogate."""
    return isinstance(s, str) and not CONTROL.search(s)


def check_text(what, s):
    if not is_text(s):
        raise InputError(f"{what} {json_text(s)} has a control character")


def check_texts(v, skip=(), at=""):
    """check_text on every string and key of `v`, each named by its place ("environment.cpu.
    model", "cases[2].reason"), the places in `skip` left out."""
    if at in skip:
        return
    if isinstance(v, str):
        check_text(at, v)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            if isinstance(x, (str, list, dict)):  # not for each number of a histogram
                check_texts(x, skip, f"{at}[{i}]")
    elif isinstance(v, dict):
        for k, x in v.items():
            check_text(f"{at} key" if at else "key", k)
            check_texts(x, skip, f"{at}.{k}" if at else k)


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose refusals read as every other input's: one line, exit status 2 (no usage
    block: --help prints it)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message}\n")
