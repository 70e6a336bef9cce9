"""Placements held against a policy's model (agreement.py) and the checks of what a guest brought
back (guest.py)."""
from wblab.agreement import compute_agreement, mix_text, render_agreement, run_json
from wblab.guest import class_pairs, pinned_checks

from resultsets import predicted, typed


def distance(strict, best=None, share=0.0, alternative=None):
    """A policy's `distance` as `wakebench predict --results` gives it."""
    weights = [] if alternative is None else [0.0] * alternative + [share]
    return {"strict": strict, "best": strict if best is None else best, "share": share,
            "alternative": alternative, "weights": weights}


def entry(mech, flags, policies, observed, start=(0, 1), placement="kernel"):
    """A predictions entry; `policies` maps each id to (classes, its distance, its verdict)."""
    hist = {c: int(f * 1000) for c, f in observed.items()}
    return {"case": f"{mech}/threads/{placement}", "mechanism": mech, "mode": "threads",
            "placement": placement, "wake_flags": flags,
            "start": list(start), "allowed": "all",
            "policies": {p: {"classes": c, "cpus": [0, 1], "settled": True, "distance": d,
                             "verdict": v, "coverage": 0.25}
                         for p, (c, d, v) in policies.items()},
            "measured": {"classes": observed, "histogram": hist, "migrations": {}},
            "groups": [{"name": "sync-pair/sync-2017", "policies": ["sync-pair", "sync-2017"],
                        "verdict": "MATCH"}],
            "consistent_with": ["sync-pair/sync-2017"]}


def results_for(pred):
    return typed([{"name": f"{e['mechanism']}/threads/kernel", "mechanism": e["mechanism"],
                   "placement": e["placement"], "repetitions": [{}, {}, {}],
                   "observed": {"cpus": {}}} for e in pred["mechanisms"]])


def test_agreement_holds_the_named_policy():
    pred = {"topology": "t", "mechanisms": [
        entry("pipe", "sync", {"mainline": ({"llc": 1.0}, distance(0.95), "MISS"),
                               "sync-pair": ({"same-cpu": 1.0}, distance(0.05), "MATCH")},
              {"same-cpu": 0.95, "llc": 0.05}),
        entry("spin", "none", {"mainline": ({"llc": 1.0}, distance(0), "MATCH")}, {"llc": 1.0})]}
    res = results_for(pred)
    main = compute_agreement(res, predicted(pred), "mainline")
    pair = compute_agreement(res, predicted(pred), "sync-pair")
    assert main["mechanisms"]["pipe"]["agreement"] == 0.05
    assert pair["mechanisms"]["pipe"]["agreement"] == 0.95
    assert (pair["mechanisms"]["pipe"]["MATCH"], main["mechanisms"]["pipe"]["MISS"]) == (1, 1)
    assert pair["cases"][0]["model_consistent"] and not main["cases"][0]["model_consistent"]
    # mainline's own model rides along for the matrix's predicted shift
    assert pair["cases"][0]["mainline_model"] == [{"llc": 1.0}]
    assert main["disagreements"] and not pair["disagreements"]
    assert [c["mechanism"] for c in pair["not_compared"]] == ["spin"]
    assert "vs the sync-pair model" in render_agreement(pair)
    assert "pipe/threads/kernel (start [0, 1], allowed all): MATCH, strict agreement 95%" in \
        render_agreement(pair)


def test_missing_policy_is_not_compared():
    pred = {"mechanisms": [entry("pipe", "sync", {"mainline": ({"llc": 1.0}, distance(0),
                                                               "MATCH")}, {"llc": 1.0})]}
    rep = compute_agreement(results_for(pred), predicted(pred), "sync-core")
    assert rep["cases"] == [] and rep["not_compared"][0]["reason"] == "no sync-core prediction"
    del pred["mechanisms"][0]["policies"]["mainline"]["verdict"]
    rep = compute_agreement(results_for(pred), predicted(pred), "mainline")
    assert rep["cases"] == [] and "no verdict" in rep["not_compared"][0]["reason"]


def test_pinned_pairs_are_classified_by_wakebench_topology():
    topo = {"classes": [{"class": "same-cpu", "available": True, "pairs": [[0, 0]]},
                        {"class": "smt-sibling", "available": True, "pairs": [[0, 1], [2, 3]]},
                        {"class": "cluster", "available": False, "reason": "none"},
                        {"class": "llc", "available": True, "pairs": [[0, 2]]}]}
    pairs = class_pairs(topo)
    res = typed([
        {"name": "a", "placement": "smt-sibling", "status": "ok", "cpus": {"waker": 0, "wakee": 1}},
        {"name": "b", "placement": "llc", "status": "ok", "cpus": {"waker": 0, "wakee": 1}},
        {"name": "c", "placement": "kernel", "status": "ok", "cpus": {"waker": 0, "wakee": 1}},
        {"name": "d", "placement": "llc", "status": "skipped", "reason": "x"}])
    rows = pinned_checks(res, pairs)
    assert [(r["name"], r.get("agrees")) for r in rows] == [("a", True), ("b", False), ("d", None)]


def test_an_explained_case_is_no_agreement_and_keeps_its_strict_figure():
    obs = {"smt-sibling": 0.6, "llc": 0.4}
    # The predictor's exact best mix: 40 % of the second alternative, strict distance 0.4.
    e = entry("pipe", "sync", {"mainline": ({"smt-sibling": 1.0}, distance(0.4, 0.0, 0.4, 1),
                                            "EXPLAINED")}, obs)
    e["policies"]["mainline"]["uncertain"] = {
        "bounds": {"llc": [0, 1], "smt-sibling": [0, 1]},
        "alternatives": [{"cause": {"kind": "busy-prev",
                                    "text": "a wake from CPU 0 finds CPU 8 busy"},
                          "classes": {"same-cpu": 1.0}, "cpus": [0]},
                         {"cause": {"kind": "busy-prev",
                                    "text": "a wake from CPU 0 finds CPU 1 busy"},
                          "classes": {"llc": 1.0}, "cpus": [0, 2]}]}
    pred = {"mechanisms": [e]}
    rep = compute_agreement(results_for(pred), predicted(pred), "mainline")
    row = rep["cases"][0]
    assert (row["verdict"], row["strict_agreement"], row["range_agreement"]) == \
        ("EXPLAINED", 0.6, 1.0)
    assert rep["mechanisms"]["pipe"]["agreement"] == 0.6
    assert (rep["mechanisms"]["pipe"]["MATCH"], rep["mechanisms"]["pipe"]["EXPLAINED"]) == (0, 1)
    assert (row["uncertain"]["best_share"], row["uncertain"]["best_alternative"]) == (0.4, 1)
    assert row["attribution"]  # only a MATCH needs no reasons
    text = render_agreement(rep)
    assert "uncertain: or llc 100% on CPUs [0, 2] once a wake from CPU 0 finds CPU 1 busy" in text
    assert "best mix: 40% of llc 100%" in text


def test_mix_text_lists_every_weighted_alternative():
    u = {"alternatives": [{"classes": {"llc": 1.0}}, {"classes": {"cross-llc": 1.0}}],
         "best_share": 0.42, "best_alternative": 0, "best_weights": [0.27, 0.15]}
    assert mix_text(u) == "27% of llc 100%, 15% of cross-llc 100%"
    assert mix_text(dict(u, best_alternative=None)) == "the steady state alone"
    assert mix_text(dict(u, best_weights=[0.001, 0.002])).startswith("the steady state alone")


def test_cases_of_one_placement_keep_their_own_names():
    """Cases that differ only in their start CPUs or knobs (a search's) share mechanism, mode and
    placement: each row is its own case, found by predict's `case` name."""
    a = entry("pipe", "sync", {"mainline": ({"llc": 1.0}, distance(0.0), "MATCH")}, {"llc": 1.0})
    b = entry("pipe", "sync", {"mainline": ({"llc": 1.0}, distance(1.0), "MISS")},
              {"same-cpu": 1.0})
    a["case"], b["case"] = "pipe/threads/kernel/start=0,2", "pipe/threads/kernel/start=2,0"
    res = typed([{"name": e["case"], "repetitions": [{}], "observed": {"cpus": {}}}
                 for e in (a, b)])
    rows = compute_agreement(res, predicted({"mechanisms": [a, b]}), "mainline")["cases"]
    assert [(r["name"], r["verdict"]) for r in rows] == [
        ("pipe/threads/kernel/start=0,2", "MATCH"), ("pipe/threads/kernel/start=2,0", "MISS")]


def test_wakebench_reads_the_labs_own_cells_beyond_its_default_input_limit(monkeypatch):
    """A cell's decision records outgrow wakebench's 256 MiB default (293 MB on smt2-3core's
    loaded cases): the lab raises the limit for what its guests wrote; a limit the user set wins."""
    cmd = ["sh", "-c", 'printf \'{"mib": "%s"}\' "$WAKEBENCH_MAX_INPUT_MIB"']
    monkeypatch.delenv("WAKEBENCH_MAX_INPUT_MIB", raising=False)
    assert run_json(cmd) == ({"mib": "4096"}, None)
    monkeypatch.setenv("WAKEBENCH_MAX_INPUT_MIB", "300")
    assert run_json(cmd) == ({"mib": "300"}, None)
