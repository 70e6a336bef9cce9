"""Kernel images and their meta.json (kernel.py), the job the guest runs (initramfs.py), the
matrix's shifts, table and document (matrix.py)."""
import json

import pytest

from wblab import LabError
from wblab.topology import topology_args
from wblab.initramfs import guest_job
from wblab.kernel import read_meta, resolve_kernel
from wblab.matrix import update_doc
from wblab.matrix_cells import Cell, Collected, Matrix
from wblab.matrix_judge import aa_floors, cell_rows, direction, distance, shift_verdict
from wblab.matrix_render import render
from wblab.predictions import parse_trace

from resultsets import typed

ORDER = ["same-cpu", "smt-sibling", "cluster", "llc", "cross-llc", "cross-numa"]


def image(tmp_path, policy=None):
    d = tmp_path / (policy or "plain")
    d.mkdir()
    (d / "bzImage").write_bytes(b"MZ")
    if policy:
        (d / "meta.json").write_text(json.dumps({
            "policy": policy, "source_version": "6.12.117", "patch_sha256": "ab" * 32,
            "config_sha256": "cd" * 32, "lockdep": False}))
    return d / "bzImage"


def test_kernel_with_meta_runs_its_policy(tmp_path):
    img = image(tmp_path, "sync-core")
    _, policy, info = resolve_kernel(str(img), None)
    assert policy == "sync-core"
    assert info["source_version"] == "6.12.117" and info["patch_sha256"] == "ab" * 32
    with pytest.raises(LabError, match="runs policy sync-core .* not --policy sync-pair"):
        resolve_kernel(str(img), "sync-pair")


def test_a_gated_image_named_gated_stays_gated(tmp_path):
    img = image(tmp_path, "gated")
    assert resolve_kernel(str(img), "gated")[1] == "gated"  # the matrix's --image gated=...
    assert resolve_kernel(str(img), None)[1] == "mainline"  # every feature off: mainline's model
    with pytest.raises(LabError, match="runs policy mainline .* not --policy sync-core"):
        resolve_kernel(str(img), "sync-core")


def test_kernel_without_meta_takes_the_named_model(tmp_path):
    img = image(tmp_path)
    assert resolve_kernel(str(img), None)[1] == "mainline"
    _, policy, info = resolve_kernel(str(img), "sync-2017")
    assert policy == "sync-2017" and "no meta.json" in info["note"]


def test_policy_asks_the_build_script(tmp_path):
    img = image(tmp_path, "sync-pair")
    asked = []
    got, policy, _ = resolve_kernel(None, "sync-pair",
                                    build=lambda p, l, a: asked.append((p, a)) or img)
    assert (got, policy, asked) == (img, "sync-pair", [("sync-pair", "x86_64")])
    with pytest.raises(LabError, match="meta.json says policy sync-pair, not mainline"):
        resolve_kernel(None, "mainline", build=lambda p, l, a: img)


def test_kernel_of_another_architecture_is_refused(tmp_path):
    img = image(tmp_path, "gated")
    meta = json.loads((img.parent / "meta.json").read_text())
    (img.parent / "meta.json").write_text(json.dumps(dict(meta, arch="arm64")))
    assert resolve_kernel(str(img), None, arch="arm64")[2]["arch"] == "arm64"
    with pytest.raises(LabError, match="is an arm64 kernel .* the guest is x86_64"):
        resolve_kernel(str(img), None)


def test_bad_meta_is_an_error(tmp_path):
    img = image(tmp_path)
    (img.parent / "meta.json").write_text("[1]")
    with pytest.raises(LabError, match="not an object"):
        read_meta(img)


def test_guest_job_runs_topology_then_run_or_custom():
    job = guest_job(None, ["--benchmark_filter=x"], 100, "smt2", now=1764650000.7)
    assert job.startswith("date -s @1764650000 > /dev/null\n")
    assert "wakebench topology --json" in job and "--benchmark_filter=x" in job
    assert "timeout 100 wakebench run" in job
    assert "wakebench run" not in guest_job(None, None, 100, "smt2")
    assert "cat /proc/schedstat" in guest_job("cat /proc/schedstat", [], 100, "smt2")


def test_guest_job_sets_sched_features_before_the_run():
    job = guest_job(None, [], 100, "2llc", ["NO_DELAY_DEQUEUE"])
    feature = job.index("echo NO_DELAY_DEQUEUE > /sys/kernel/debug/sched/features")
    assert "step feature-NO_DELAY_DEQUEUE" in job and feature < job.index("wakebench run")
    assert "sched/features" not in guest_job(None, [], 100, "2llc")


def test_topology_args_names_free_form_custom():
    t = topology_args("smt2")
    assert (t["name"], t["smp"], t["arch"]) == ("smt2", "4,sockets=1,cores=2,threads=2", "x86_64")
    assert topology_args("smt2", smp="8,sockets=1,cores=4,threads=2")["name"] == "custom"
    a = topology_args("arm64-altra")
    assert (a["arch"], a["cpu_model"], a["caches"]) == ("arm64", "max", {2: "core"})
    with pytest.raises(LabError):
        topology_args(None)


def test_distance_and_direction():
    assert distance({"same-cpu": 0.5, "llc": 0.5}, ORDER) == 1.5
    assert direction(-0.05) == 0 and direction(-0.5) == -1 and direction(0.3) == 1


def report(policy, model, observed, mainline_model, alternatives=(), verdict="MISS"):
    return {"policy": policy, "cases": [{
        "name": "pipe/threads/kernel", "mechanism": "pipe", "wake_flags": "sync",
        "verdict": verdict, "strict_agreement": 0.5, "range_agreement": 0.5, "coverage": 0.25,
        "observed": {"classes": observed},
        "model": {"classes": model, "states": [model, *alternatives]},
        "mainline_model": [mainline_model, *alternatives], "attribution": ["because"]}]}


def matrix_of(kernels, cells):
    """A judged Matrix of `cells` (preset -> kernel -> rows, or the reason it is missing)."""
    return Matrix(tuple(kernels), tuple(kernels), {p: {
        k: Cell(v) if isinstance(v, str) else Cell(collected=Collected({}), rows=v)
        for k, v in pk.items()} for p, pk in cells.items()})


def test_cell_rows_shift_against_mainlines_run():
    base = report("mainline", {"smt-sibling": 1.0}, {"smt-sibling": 0.6, "llc": 0.4},
                  {"smt-sibling": 1.0})
    # predicted: smt-sibling -> same-cpu (-1); observed 0.6*1+0.4*3=1.8 -> 0.9*0+0.1*3=0.3
    pair = report("sync-pair", {"same-cpu": 1.0}, {"same-cpu": 0.9, "llc": 0.1},
                  {"smt-sibling": 1.0})
    row = cell_rows(pair, base, ORDER)["pipe/threads/kernel"]
    assert row.shift.observed == -1.5
    assert row.shift.central == -1.0 and row.shift.verdict == "as predicted"
    wrong = report("sync-pair", {"same-cpu": 1.0}, {"llc": 1.0}, {"smt-sibling": 1.0})
    assert cell_rows(wrong, base, ORDER)["pipe/threads/kernel"].shift.verdict == "wrong way"
    still = report("sync-pair", {"same-cpu": 1.0}, {"smt-sibling": 0.6, "llc": 0.4},
                   {"smt-sibling": 1.0})
    assert cell_rows(still, base, ORDER)["pipe/threads/kernel"].shift.verdict == "not seen"
    assert cell_rows(base, base, ORDER)["pipe/threads/kernel"].shift is None


def test_a_shift_where_the_steady_states_agree_is_unpredicted_beyond_mainlines_own():
    # Predicted no shift; observed -0.15 (5% stacked): unpredicted unless mainline itself moved as
    # much between two runs. The uncertain ranges never make it "in range".
    base = report("mainline", {"llc": 1.0}, {"llc": 1.0}, {"llc": 1.0}, [{"same-cpu": 1.0}])
    pair = report("sync-core", {"llc": 1.0}, {"llc": 0.95, "same-cpu": 0.05}, {"llc": 1.0},
                  [{"same-cpu": 1.0}])
    assert cell_rows(pair, base, ORDER)["pipe/threads/kernel"].shift.verdict == "unpredicted"
    floors = aa_floors(ORDER, base, {"pipe/threads/kernel": {"llc": 0.9, "same-cpu": 0.1}})
    assert floors == {"pipe/threads/kernel": pytest.approx(0.3)}
    row = cell_rows(pair, base, ORDER, floors=floors)["pipe/threads/kernel"]
    assert row.shift.verdict == "none" and row.shift.aa_floor == 0.3


def test_shift_verdict_can_fail_every_way():
    assert shift_verdict(-1.0, -1.0) == "as predicted"
    assert shift_verdict(0.05, -1.0) == "not seen"
    assert shift_verdict(0.5, -1.0) == "wrong way"
    assert shift_verdict(0.05, 0.0) == "none"
    assert shift_verdict(-0.5, 0.0) == "unpredicted"
    assert shift_verdict(-0.5, 0.0, floor=0.6) == "none"


def test_render_counts_each_word_apart_and_lists_why():
    base = report("mainline", {"llc": 1.0}, {"llc": 1.0}, {"llc": 1.0}, verdict="NO-PREDICTION")
    pair = report("sync-pair", {"same-cpu": 1.0}, {"llc": 1.0}, {"llc": 1.0})
    m = matrix_of(["mainline", "sync-pair", "sync-core"], {"smt2": {
        "mainline": cell_rows(base, base, ORDER), "sync-pair": cell_rows(pair, base, ORDER),
        "sync-core": "no kernel: build-kernel.sh not found"}})
    text = render(m)
    assert ("| pipe/threads/kernel | sync | **NO-PREDICTION 50%** | **MISS 50%** +0.00/-3.00 "
            "not seen | not run |") in text
    assert text.startswith("2 case rows: 0 MATCH (the steady state within TV 0.25), 0 EXPLAINED "
                           "(a mix with named alternatives), 1 MISS; 1 NO-PREDICTION")
    assert "0 rows have a range that admits 90% or more" in text
    assert "where the steady states predict one (1 rows), 0 as predicted, 1 not seen" in text
    assert "#### NO-PREDICTION rows" in text
    assert "- smt2 / sync-pair / pipe/threads/kernel: MISS, strict 50%" in text
    assert "because" in text
    assert "- sync-core: no kernel: build-kernel.sh not found" in text


def test_short_cell_lists_its_wakeup_trace():
    base = report("mainline", {"llc": 1.0}, {"llc": 0.7, "same-cpu": 0.3}, {"llc": 1.0})
    trace = {"wakeups": 100, "paths": {"selection": 90, "ttwu_runnable": 10, "queued_remote": 0},
             "classes_by_path": {"selection": {"same-cpu": 20, "llc": 70},
                                 "ttwu_runnable": {"same-cpu": 10, "llc": 0}},
             "moved": 4, "moved_by_class": {"same-cpu": 3, "llc": 1},
             "foreign": {"wakeups": 5, "moved": 1},
             "since_switch_out_us": {"kept": {"n": 86, "p5": 11.0, "p50": 13.0, "p95": 42.0},
                                     "moved": {"n": 4, "p5": 89.0, "p50": 346.0, "p95": 5028.0}},
             "migrations": {"at_wakeup": 4, "other": 2}, "dropped": 0,
             "unmatched": 0}
    rows = cell_rows(base, base, ORDER, {"pipe/threads/kernel": parse_trace(trace)})
    m = matrix_of(["mainline"], {"2llc": {"mainline": rows}})
    assert ("  - traced 100 wakeups by the partner: selection 90 (same-cpu 20, llc 70); "
            "ttwu_runnable 10 (same-cpu 10); queued_remote 0; moved off the wakee's previous CPU "
            "4 (to same-cpu 3, llc 1); woken by another task 5 (moved 1); task migrations inside "
            "a wakeup 4, outside (load balancing) 2; from the wakee's switch-out to the waking, "
            "median (5th-95th): kept 13 us (11-42, 86 wakes), moved 346 us (89-5028, 4 wakes)\n"
            ) in render(m)
    assert cell_rows(base, base, ORDER, {})["pipe/threads/kernel"].trace is None


def test_update_doc_replaces_between_markers(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("intro\n<!-- matrix:begin -->\nold\n<!-- matrix:end -->\nafter\n")
    update_doc(doc, "new\n")
    assert doc.read_text() == "intro\n<!-- matrix:begin -->\nnew\n<!-- matrix:end -->\nafter\n"
    with pytest.raises(LabError, match="no '<!-- matrix-arm64:begin -->'"):
        update_doc(doc, "arm\n", "arm64")
    doc.write_text(doc.read_text() + "<!-- matrix-arm64:begin -->\n<!-- matrix-arm64:end -->\n")
    update_doc(doc, "arm\n", "arm64")
    assert doc.read_text().endswith("<!-- matrix-arm64:begin -->\narm\n<!-- matrix-arm64:end -->\n")
    assert "new" in doc.read_text()
    doc.write_text("no markers")
    with pytest.raises(LabError, match="markers"):
        update_doc(doc, "x")


def test_explained_cell_shows_its_range_figure_and_alternatives():
    base = report("mainline", {"smt-sibling": 1.0}, {"smt-sibling": 0.6, "llc": 0.4},
                  {"smt-sibling": 1.0}, verdict="EXPLAINED")
    base["cases"][0].update(strict_agreement=0.6, range_agreement=1.0, uncertain={
        "alternatives": [{"classes": {"llc": 1.0}, "cpus": [0, 2], "cause": "a wake finds 1 busy"}],
        "best_share": 0.4, "best_alternative": 0, "best_weights": [0.4]})
    m = matrix_of(["mainline"], {"smt2": {"mainline": cell_rows(base, base, ORDER)}})
    text = render(m)
    assert "| pipe/threads/kernel | sync | **EXPLAINED 60% r100%** |" in text
    assert ("- smt2 / mainline / pipe/threads/kernel: EXPLAINED, strict 60%, range 100% (admits "
            "25%); observed smt-sibling 60% llc 40%; model smt-sibling 100%\n"
            "  - best mix 40% of llc 100%\n"
            "  - or llc 100% on CPUs [0, 2] once a wake finds 1 busy\n") in text


def test_matrix_refuses_a_bad_aa_or_repetitions_before_any_guest(tmp_path):
    from wblab.matrix import main
    with pytest.raises(LabError, match="no smt2/mainline/results.json"):
        main(["--out", str(tmp_path / "m"), "--aa", str(tmp_path / "none")])
    with pytest.raises(LabError, match="not a positive count"):
        main(["--out", str(tmp_path / "m"), "--repetitions", "0"])
    with pytest.raises(LabError, match="--mem: 100 MiB is less than"):
        main(["--out", str(tmp_path / "m"), "--mem", "100"])
    assert not (tmp_path / "m").exists()


def test_a_full_guest_tmp_says_to_give_it_more_ram():
    from wblab.guest import transfer_problems
    got = {"errors": [], "hello": True, "done": True, "exits": {"run": 2},
           "files": {"run.log": b"wakebench: cannot write /tmp/out/results-ab1.decisions.txt: "
                                 b"No space left on device\n"}}
    assert any("--mem" in p for p in transfer_problems(got, None))
    got["files"]["run.log"] = b"wakebench: case timed out\n"
    assert not any("--mem" in p for p in transfer_problems(got, None))


def test_observed_classes_reads_each_cases_histogram():
    from wblab.matrix_collect import observed_classes
    rs = typed([{"name": "a", "observed": {"histogram": {"llc": 3, "same-cpu": 1, "cross-llc": 0}}},
                {"name": "b", "observed": {"histogram": {}}}, {"name": "c"}])
    assert observed_classes(rs) == {"a": {"llc": 0.75, "same-cpu": 0.25}}
