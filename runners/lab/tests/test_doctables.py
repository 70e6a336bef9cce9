"""docs/lab-validation.md's headline tables drawn from matrix files (doctables.py)."""
from wblab.cli import main as cli_main
from wblab.doctables import replay_table, verdicts_table

HEAD = "| preset | kernel | wakeups | verdict |\n|---|---|---|---|\n"


def matrix_file(replay_rows, tables):
    """A matrix.md: the replay section with `replay_rows`, then one table per preset."""
    text = "Rendered ...\n\n#### Replay: the kernel's own decisions\n\nPer cell ...\n\n" + HEAD
    text += "".join(f"| {p} | {k} | 10 | goal met |\n" for p, k in replay_rows) + "\n"
    text += "3 case rows: ...\n\n"
    for preset, cols, rows in tables:
        text += f"#### {preset}\n\n| case | flags | " + " | ".join(cols) + " |\n"
        text += "|---|---|" + "---|" * len(cols) + "\n"
        text += "".join(f"| {n} | sync | " + " | ".join(r) + " |\n" for n, r in rows) + "\n"
    return text + "#### MISS rows and shifts the wrong way or unpredicted\n\n| not | a table |\n"


OLD = matrix_file([("smt2", "mainline")], [("smt2", ["mainline", "sync-core "], [
    ("a", ["MATCH 90%", "**MISS 10%** +0.00/-1.00 not seen"]),
    ("b", ["**EXPLAINED 60% r90%**", "not run"])])])
NEW = matrix_file([("smt2", "mainline"), ("4core", "gated:sync-pair")], [("smt2", [
    "mainline", "sync-core "], [("a", ["MATCH 90%", "**EXPLAINED 10% r80%** +0.00/-1.00 none"]),
                                ("b", ["MATCH 80%", "not run"])])])


def test_replay_rows_of_several_files_make_one_table_the_labelled_ones_marked():
    assert replay_table([(OLD, "m4"), (NEW, None)]) == [
        "| preset | kernel | wakeups | verdict |", "|---|---|---|---|",
        "| smt2 (m4) | mainline | 10 | goal met |", "| smt2 | mainline | 10 | goal met |",
        "| 4core | gated:sync-pair | 10 | goal met |"]


def test_verdicts_count_each_cell_judged_in_both():
    assert verdicts_table(OLD, NEW) == [
        "| preset | kernel | before: MATCH / EXPLAINED / MISS | after |", "|---|---|---|---|",
        "| smt2 | mainline | 1 / 1 / 0 | 2 / 0 / 0 |", "| smt2 | sync-core | 0 / 0 / 1 | 0 / 1 / 0 |"]


def test_the_tables_command(tmp_path, capsys):
    (tmp_path / "old.md").write_text(OLD)
    (tmp_path / "new.md").write_text(NEW)
    assert cli_main(["tables", "verdicts", str(tmp_path / "old.md"), str(tmp_path / "new.md")]) == 0
    assert capsys.readouterr().out.endswith("| smt2 | sync-core | 0 / 0 / 1 | 0 / 1 / 0 |\n")
    assert cli_main(["tables", "replay", f"{tmp_path / 'old.md'}:m4"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "| smt2 (m4) | mainline | 10 | goal met |"
