"""wblab/replay.py: the verdict per cell and the table, on replay summaries as `wakebench replay
--json` gives them."""
from wblab import replay
from wblab.registry import KERNELS as POLICIES


def summary(agree, wakeups=1000):
    return {"wakeups": wakeups, "decisions": wakeups, "unrecorded": 0, "agree": agree,
            "rules": {}, "uncovered": [], "first_disagreements": [],
            "wake_wide": {"count": 3, "agree": 3}}


def test_the_own_policy_decides_the_verdict_and_the_others_are_shown():
    ok = {p: summary(1000 if p == "sync-core" else 700) for p in POLICIES}
    for p in POLICIES:
        ok[p]["split"] = {"records": 300, "own": 300, "other": 0}
    assert replay.verdict(ok, "sync-core") == "goal met"
    # The same records held to another policy (a wrong pairing) fall short.
    assert replay.verdict(ok, "mainline") == "short of the goal"
    assert replay.verdict({p: summary(998) for p in POLICIES}, "mainline") == "short of the goal"
    assert replay.verdict({"unavailable": "no records"}, "mainline") == "not replayed"
    rows = replay.render([("smt2", "gated:sync-core", "sync-core", ok),
                          ("smt2", "mainline", "mainline", {"unavailable": "no records"})])
    assert rows[2].startswith("| smt2 | gated:sync-core | 1000 | 1000 | 3 | goal met | ")
    assert "**100.00%**" in rows[2] and "70.00% (0 of 300)" in rows[2]
    assert "not replayed: no records" in rows[3]
    assert all(len(r.split("|")) == len(rows[0].split("|")) for r in rows)


def disagreement(case, index, rule, cpu):
    return {"case": case, "index": index, "model": {"rule": rule, "cpu": cpu}}


def test_the_records_the_two_models_split_on_are_counted_for_each():
    own = {"disagreements": [disagreement("a", 1, "sis_prev", 2)]}
    other = {"disagreements": [disagreement("a", 1, "sis_prev", 2),   # both wrong alike: no split
                               disagreement("a", 5, "sis_target", 0),
                               disagreement("b", 5, "sis_target", 0)]}
    assert replay.discriminating(own, other) == {"records": 2, "own": 2, "other": 0}
    # The other way round: the kernel matched the first model on none of its splits.
    assert replay.discriminating(other, own) == {"records": 2, "own": 0, "other": 2}


def test_coverage_adds_each_kernels_records_by_rule_and_names_the_unreached():
    def own(rules, uncovered):
        return {"rules": {r: {"count": n, "agree": a} for r, (n, a) in rules.items()},
                "uncovered": uncovered}
    cells = [("smt2", "mainline", "mainline",
              {"mainline": own({"sis_prev": (10, 10)}, ["sis_kthread", "sis_target"])}),
             ("2llc", "mainline", "mainline",
              {"mainline": own({"sis_prev": (5, 4), "sis_target": (2, 2)}, ["sis_kthread"])}),
             ("smt2", "gated:sync-core", "sync-core",
              {"sync-core": own({"hook_select_idle_sync_core": (3, 3)}, ["sis_kthread"])}),
             ("smt2", "sync-pair", "sync-pair", {"unavailable": "no records"})]
    cov = replay.coverage(cells)
    assert cov["sis_prev"] == {"mainline": (15, 14)}
    assert cov["sis_target"] == {"mainline": (2, 2)}
    assert cov["hook_select_idle_sync_core"] == {"sync-core": (3, 3)}
    assert cov["sis_kthread"] == {}
    rows = replay.render_coverage(cells)
    row = {r.split(" | ")[0][2:]: r for r in rows[2:]}
    assert "| 15 / 14 |" in row["sis_prev"] and row["sis_prev"].endswith("|  |")
    assert row["sis_kthread"].endswith("| exempt: needs a per-CPU kthread waking the wakee |")
    # A rule no cell reached and no exemption covers keeps the goal open: said so.
    cells[0][3]["mainline"]["uncovered"].append("sis_select_idle_smt")
    assert "| sis_select_idle_smt | - | - | - | - | - | unreached |" in \
        replay.render_coverage(cells)
    assert all(len(r.split("|")) == len(rows[0].split("|")) for r in rows)
