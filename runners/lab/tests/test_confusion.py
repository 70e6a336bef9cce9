"""The kernel named from its placements (confusion.py): hits, misses, ties, controls, the
6-case floor, and inputs whose verdict must contradict the running kernel."""
import json
from pathlib import Path

from wblab import confusion, predictions, resultset
from wblab.confusion import render, summary

from resultsets import predicted

FIXTURE = json.loads((Path(__file__).parent / "fixtures/2llc-sync-pair.json").read_text())
RESULTS = resultset.parse(FIXTURE["results"], "2llc-sync-pair.json")
PAIR = [["mainline", "sync-pair"]]


def group(name, strict, verdict="MATCH"):
    return {"name": name, "policies": name.split("/"), "distance": {"strict": strict},
            "verdict": verdict}


def entry(groups, pairs=PAIR, native=None, case="pipe/threads/kernel"):
    e = {"case": case, "mechanism": case.split("/")[0], "mode": case.split("/")[1],
         "groups": groups, "discriminates": pairs, "measured": {"status": "ok"}}
    if native is not None:
        e["discriminates_native"] = native
    return e


# confusion's functions on the hand-built entries and groups above, as the lab reads them.
def judge(e, policy):
    return confusion.judge(predictions.parse_case(e, "entry"), policy)


def nearest_label(groups):
    return confusion.nearest_label([predictions.parse_group(g, "group") for g in groups])


def cell_confusion(pred, results, policy):
    return confusion.cell_confusion(predicted(pred), results, policy)


def test_nearer_by_the_margin_is_a_hit():
    e = entry([group("sync-pair/sync-2017", 0.02), group("mainline/sync-core", 0.9)])
    assert judge(e, "sync-pair")["kind"] == "hit"
    assert judge(e, "sync-pair")["nearest"] == "sync-pair"


def test_placements_that_fit_another_group_are_a_miss_naming_it():
    e = entry([group("mainline/sync-core", 0.02), group("sync-pair/current-cpu", 0.9)])
    row = judge(e, "sync-pair")
    assert (row["kind"], row["nearest"]) == ("miss", "mainline/sync-core")
    # the group without a lab kernel's policy other than the running one keeps the lab names only
    assert judge(entry([group("sync-pair/current-cpu", 0.02), group("mainline", 0.5)]),
                 "mainline")["nearest"] == "sync-pair"


def test_a_tie_is_a_miss():
    e = entry([group("sync-pair", 0.10), group("mainline", 0.14)])
    row = judge(e, "sync-pair")
    assert (row["kind"], row["nearest"]) == ("miss", "tie")
    # nearer by exactly the margin (three decimals) is a hit, by less is not
    assert judge(entry([group("sync-pair", 0.10), group("mainline", 0.15)]),
                 "sync-pair")["kind"] == "hit"
    assert nearest_label([group("a", 0.3), group("b", 0.3)]) == "tie"


def test_groups_with_one_steady_state_rank_as_one():
    """mainline and sync-core on one steady state (apart only by their alternatives) always tie
    on the strict distance: taken as one group, the running mainline is a hit against sync-2017;
    placements nearer sync-2017 are still a miss."""
    def g(name, strict, classes):
        return dict(group(name, strict), classes=classes)
    split, stacked = {"llc": 1.0}, {"same-cpu": 1.0}
    pairs = [["mainline", "sync-2017"], ["sync-core", "sync-2017"]]
    e = entry([g("mainline", 0.05, split), g("sync-core", 0.05, split),
               g("sync-2017", 0.95, stacked)], pairs)
    assert judge(e, "mainline")["kind"] == "hit"
    assert judge(e, "sync-core")["kind"] == "hit"
    e = entry([g("sync-2017", 0.1, stacked), g("mainline", 0.9, split),
               g("sync-core", 0.9, split)], pairs)
    row = judge(e, "mainline")
    assert (row["kind"], row["nearest"]) == ("miss", "sync-2017")


def test_controls_other_pairs_and_no_prediction_are_set_apart():
    assert judge(entry([group("sync-pair", 0.0)], pairs=[]), "sync-pair")["kind"] == "control"
    other = entry([group("sync-2017", 0.0), group("current-cpu", 0.9)],
                  pairs=[["sync-2017", "current-cpu"]])
    assert judge(other, "sync-2017")["kind"] == "other-pairs"  # current-cpu has no lab kernel
    assert judge(other, "mainline")["kind"] == "other-pairs"
    nopred = entry([group("sync-pair", 0.0, "NO-PREDICTION"), group("mainline", 0.9)])
    assert judge(nopred, "sync-pair")["kind"] == "no-prediction"


def test_without_the_discriminates_field_nothing_is_judged():
    e = entry([group("sync-pair", 0.0), group("mainline", 0.9)])
    del e["discriminates"]
    row = judge(e, "sync-pair")
    assert row["kind"] == "unknown" and "no `discriminates`" in row["why"]


def test_a_case_without_the_running_policys_group_is_not_judged():
    row = judge(entry([group("sync-2017", 0.0), group("sync-core", 0.9)],
                      pairs=[["sync-pair", "sync-core"]]), "sync-pair")
    assert (row["kind"], row["why"]) == ("unknown", "no ranked group holds sync-pair")


def test_emulation_dependence_is_marked():
    e = entry([group("sync-pair", 0.0), group("mainline", 0.9)],
              pairs=PAIR + [["sync-pair", "sync-core"]], native=PAIR)
    row = judge(e, "sync-pair")
    assert row["emulation"] and row["native"] == [("mainline", "sync-pair")]
    assert not judge(entry([group("sync-pair", 0.0), group("mainline", 0.9)], native=PAIR),
                     "sync-pair")["emulation"]


def rows_of(kinds):
    return [{"kind": k, "nearest": n} for k, n in kinds]


def test_fewer_than_six_counted_cases_read_not_tested():
    five = rows_of([("hit", "mainline")] * 5 + [("control", None)] * 10)
    assert summary(five)["verdict"] == "not tested"
    assert summary(five + rows_of([("hit", "mainline")]))["verdict"] == "goal met"


def test_the_goal_is_ninety_percent_hits():
    nine = rows_of([("hit", "mainline")] * 9 + [("miss", "tie")])
    s = summary(nine)
    assert (s["verdict"], s["hit"], s["counted"]) == ("goal met", 9, 10)
    assert s["confusion"] == {"mainline": 9, "tie": 1}
    s = summary(rows_of([("hit", "mainline")] * 8 + [("miss", "sync-2017")] * 2))
    assert s["verdict"] == "short of the goal"


def test_a_real_cell_counts_its_case_lists_the_dropped_and_traces_a_miss():
    got = cell_confusion(FIXTURE["predict"], RESULTS, "sync-pair")
    kinds = [(r["case"], r["kind"]) for r in got["rows"]]
    assert kinds == [("pipe/threads/kernel", "hit"), ("pipe/threads/kernel-3cpus", "control"),
                     ("pipe/threads/kernel-cross-llc", "control")]
    assert got["dropped"] == [{"case": "tcp-loopback/threads/kernel", "status": "failed",
                               "reason": "timeout after 180 s"}]
    # mainline's group there is NO-PREDICTION: set apart, neither hit nor miss
    held = cell_confusion(FIXTURE["predict"], RESULTS, "mainline")["rows"][0]
    assert held["kind"] == "no-prediction"
    # With a verdict of its own, the same placements held to mainline's kernel fit sync-pair's
    # group: a miss.
    pred = json.loads(json.dumps(FIXTURE["predict"]))
    pred["mechanisms"][0]["groups"][1]["verdict"] = "MISS"
    miss = cell_confusion(pred, RESULTS, "mainline")["rows"][0]
    assert (miss["kind"], miss["nearest"]) == ("miss", "sync-pair/sync-2017")
    assert miss["trace"] == ("paths queued_remote 1, selection 14576, ttwu_runnable 1; moved off "
                             "the wakee's CPU 0; round trips off the predicted CPUs [0, 1]: "
                             "waker 5621, wakee 5626")


def test_render_shows_each_miss_with_its_trace_or_as_unexplained():
    rows = [("smt2", {"kind": "miss", "case": "a", "nearest": "tie", "own": 0.1,
                      "others": {"mainline": 0.12}, "trace": "paths selection 9"}),
            ("smt2", {"kind": "miss", "case": "b", "nearest": "sync-2017", "own": 0.6,
                      "others": {"sync-2017": 0.0}, "trace": None, "emulation": True,
                      "pairs": [("mainline", "sync-2017")], "native": []})]
    per_row = {"sync-pair": rows}
    text = "\n".join(render({"sync-pair": summary([r for _, r in rows])}, per_row))
    assert "| sync-pair | not tested | 0 of 2 (0%) |" in text
    assert "- MISS smt2 / sync-pair / a: nearest tie; strict to its own group 0.100" in text
    assert "(depends on emulation)" in text
    assert "  - paths selection 9" in text
    assert "  - unexplained: the case has no wakeup trace" in text
    assert "- smt2 / b: discriminates mainline/sync-2017; natively nothing" in text
    assert all(len(line) <= 100 for line in text.splitlines() if not line.startswith("|"))


def test_a_miss_names_the_first_wakes_that_left_the_predicted_cpus():
    from wblab.confusion import first_moves_text
    moves = predictions.parse_trace({"paths": {}, "first_moves": [
        {"run": 0, "wake": 3, "waker_cpu": 0, "from": 2, "to": 1, "path": "selection"},
        {"run": 1, "wake": 0, "waker_cpu": 0, "from": 1, "to": 4, "path": "selection"}]}
    ).first_moves
    assert first_moves_text(moves, [0, 1]) == \
        "; first wakes off them: run 1 wake 0 1->4 (selection)"
    assert first_moves_text(moves, [0, 1, 4]) == "; no traced move left the predicted CPUs"
    assert first_moves_text(None, [0, 1]) == ""
