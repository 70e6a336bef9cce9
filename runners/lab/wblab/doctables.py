"""`wakebench-lab tables`: docs/lab-validation.md's headline tables, drawn from the generated
matrix files it links (matrix.md, or a --doc file), which themselves regenerate from the result
sets with `wakebench-lab matrix --no-run`:
- `replay FILE[:LABEL]...`: the replay rows of each file, one table (LABEL marks its presets);
- `verdicts BEFORE AFTER`: strict MATCH / EXPLAINED / MISS per cell in two renderings of the
  same cells (e.g. two models), the cells both judged."""
import argparse

from . import inputs

WORDS = ("MATCH", "EXPLAINED", "MISS")


def cells(line):
    """The cells of a markdown table row."""
    return [c.strip() for c in line.strip().strip("|").split(" | ")]


def replay_rows(text):
    """The replay table of one matrix file (header, separator, rows)."""
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("#### "):
            if inside:
                break
            inside = line.startswith("#### Replay")
        elif inside and line.startswith("|"):
            out.append(line)
    return out


def replay_table(files):
    """[(text, label or None)] -> one table: the first file's header, every file's rows, the
    preset of a labelled file's rows marked `preset (label)`."""
    lines = []
    for i, (text, label) in enumerate(files):
        rows = replay_rows(text)[0 if i == 0 else 2:]
        for row in rows:
            c = cells(row)
            if label and not c[0].startswith(("preset", "---")):
                row = row.replace(f"| {c[0]} |", f"| {c[0]} ({label}) |", 1)
            lines.append(row)
    return lines


def verdict_counts(text):
    """{(preset, column): [MATCH, EXPLAINED, MISS]} from the per-preset tables of a matrix file."""
    out, preset, cols = {}, None, None
    for line in text.splitlines():
        if line.startswith("#### "):
            preset, cols = line[5:].strip(), None
        elif line.startswith("| case | flags |"):
            cols = cells(line)[2:]
        elif cols and line.startswith("| "):
            for k, c in zip(cols, cells(line)[2:]):
                word = c.strip("*").split()[0]
                if word in WORDS:
                    out.setdefault((preset, k), [0, 0, 0])[WORDS.index(word)] += 1
    return out


def verdicts_table(before, after):
    """Both renderings' counts per cell judged in both, in the first one's order."""
    b, a = verdict_counts(before), verdict_counts(after)
    return ["| preset | kernel | before: MATCH / EXPLAINED / MISS | after |", "|---|---|---|---|"] \
        + [f"| {p} | {k} | {' / '.join(map(str, n))} | {' / '.join(map(str, a[p, k]))} |"
           for (p, k), n in b.items() if (p, k) in a]


def read(spec):
    path, _, label = spec.partition(":")
    data = inputs.read_bytes(path, "matrix file")
    try:
        return data.decode(), label or None
    except UnicodeDecodeError as e:
        raise inputs.InputError(f"{path}: not a readable matrix file (not UTF-8 at byte "
                                f"{e.start})") from None


def main(argv):
    ap = inputs.ArgumentParser(prog="wakebench-lab tables", description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="table", required=True)
    sub.add_parser("replay").add_argument("files", nargs="+", metavar="FILE[:LABEL]")
    v = sub.add_parser("verdicts")
    v.add_argument("before")
    v.add_argument("after")
    args = ap.parse_args(argv)
    if args.table == "replay":
        lines = replay_table([read(f) for f in args.files])
    else:
        lines = verdicts_table(read(args.before)[0], read(args.after)[0])
    print("\n".join(lines))
    return 0
