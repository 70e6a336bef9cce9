"""`wakebench-lab matrix --no-run` end to end on cells written here, with a stand-in wakebench
whose `predict` reads the groups each case carries: the cases file's record, the gated kernel's
settings and read-back, the fidelity against the per-patch kernels and the confusion rows."""
import hashlib
import json
import subprocess

import pytest

from wblab import LabError
from wblab.fidelity import settings
from wblab.matrix import main

CASES = [f"pipe/threads/kernel-{i}" for i in range(6)]
NEAR, FAR = {"smt-sibling": 1.0}, {"same-cpu": 1.0}
GROUPS = [("mainline/sync-core/sync-core-v2", NEAR), ("sync-pair/sync-2017/current-cpu", FAR)]
# A stand-in for `wakebench predict --results R --json`: each case's entry from the groups above
# (GROUPS_JSON: the same for every case), the TV to the observed shares and the verdicts.
FAKE = r'''#!/usr/bin/python3
import json, sys
rs = json.load(open(sys.argv[sys.argv.index("--results") + 1]))
def tv(p, q):
    return round(0.5 * sum(abs(p.get(c, 0) - q.get(c, 0)) for c in set(p) | set(q)), 3)
out = []
for c in rs["cases"]:
    hist = c["observed"]["histogram"]
    obs = {k: v / sum(hist.values()) for k, v in hist.items() if v}
    groups, policies = [], {}
    for name, classes in GROUPS_JSON:
        d = tv(obs, classes)
        dist = {"strict": d, "best": d, "share": 0, "alternative": None, "weights": []}
        verdict = "MATCH" if d <= 0.25 else "MISS"
        groups.append({"name": name, "policies": name.split("/"), "classes": classes,
                       "distance": dist, "verdict": verdict})
        for p in name.split("/"):
            policies[p] = {"classes": classes, "cpus": [0, 1], "settled": True,
                           "distance": dist, "verdict": verdict, "coverage": 0.3}
    groups.sort(key=lambda g: g["distance"]["strict"])
    out.append({"case": c["name"], "mechanism": "pipe", "mode": "threads",
                "placement": c["placement"], "wake_flags": "sync", "start": [0, 1],
                "allowed": "0-3", "policies": policies, "groups": groups,
                "discriminates": [["mainline", "sync-pair"]],
                "discriminates_native": [] if c["name"].endswith("-4") else
                [["mainline", "sync-pair"]],
                "measured": {"status": c["status"], "classes": obs, "histogram": hist,
                             "migrations": {}}})
print(json.dumps({"topology": "t", "mechanisms": out}))
'''


def result_set(config_sha, observed, policy, status="ok", ab=None, read_back=None):
    cases = []
    for i, name in enumerate(CASES):
        obs = observed(i)
        reps = [{"median": 1} for _ in range(6)]
        if read_back is not None:
            reps = [dict(r, ab={"round": j, "read_back": read_back}) for j, r in enumerate(reps)]
        cases.append({"name": name, "mechanism": "pipe", "mode": "threads",
                      "placement": f"kernel:{i}", "status": status if i == 5 else "ok",
                      "reason": "timeout" if status != "ok" and i == 5 else None,
                      "repetitions": reps,
                      "observed": {"histogram": {c: int(f * 1000) for c, f in obs.items()},
                                   "cpus": {"waker": {"0": 6000}, "wakee": {"1": 6000}}}})
    rs = {"schema": "wakebench-results", "schema_version": 3, "cases": cases, "environment": {
        "config_hash": f"sha256:{config_sha}", "captured_at": "2030-01-01T00:00:00Z",
        "wakebench": {"git_sha": "abc123def456"}, "lab_kernel": {"policy": policy}}}
    if ab is not None:
        rs["ab"] = ab
    return rs


def write(path, doc):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def gated_guest(guest, sha, bad_setting=None, off_case=None):
    """The gated guest's five result sets; `bad_setting` reads SYNC_CORE back wrong, `off_case`
    moves gated:sync-pair's first case half away from the per-patch kernel's placements."""
    rows = settings()
    for k, (policy, want) in enumerate(rows):
        values = {f"feature:{f}": "on" if on else "off" for f, on in want.items()}
        back = {f"feature:{f}": f if on else f"NO_{f}" for f, on in want.items()}
        if k == bad_setting:
            back["feature:SYNC_CORE"] = "NO_SYNC_CORE"
        ab = {"id": "run", "setting": k, "settings": len(rows), "label": policy,
              "values": values, "order_seed": 1}

        def observed(i, policy=policy):
            if policy == "sync-pair" and off_case and i == 0:
                return {"same-cpu": 0.5, "smt-sibling": 0.5}
            return FAR if policy in ("sync-pair", "sync-2017") else NEAR
        write(guest / f"results-ab{k}.json",
              result_set(sha, observed, "gated", ab=ab, read_back=back))
    write(guest / "lab-summary.json", {"name": "smt2", "kernel": "/k/bzImage",
                                       "lab_kernel": {"policy": "gated"},
                                       "qemu_command": ["qemu"]})


@pytest.fixture
def lab(tmp_path):
    """A matrix folder of smt2 x mainline, sync-pair, gated; an A/A run; the stand-in wakebench;
    a cases file of one's own."""
    wb = tmp_path / "wakebench"
    wb.write_text(FAKE.replace("GROUPS_JSON", json.dumps(GROUPS)))
    wb.chmod(0o755)
    cases = tmp_path / "mine.json"
    cases.write_text(json.dumps({"cases": [{"mechanisms": ["pipe"], "modes": ["threads"],
                                            "placements": ["kernel"]}]}))
    sha = hashlib.sha256(cases.read_bytes()).hexdigest()
    out = tmp_path / "m"
    write(out / "smt2/mainline/results.json", result_set(sha, lambda i: NEAR, "mainline",
                                                         status="failed"))
    write(out / "smt2/mainline/topology.json", {"classes": [
        {"class": c} for c in ("same-cpu", "smt-sibling", "llc")]})
    write(out / "smt2/sync-pair/results.json", result_set(sha, lambda i: FAR, "sync-pair"))
    write(tmp_path / "aa/smt2/mainline/results.json",
          result_set(sha, lambda i: {"smt-sibling": 0.9, "llc": 0.1}, "mainline"))
    return {"out": out, "wb": wb, "cases": cases, "sha": sha, "aa": tmp_path / "aa"}


def run(lab, *extra):
    argv = ["--no-run", "--presets", "smt2", "--kernels", "mainline,sync-pair,gated",
            "--out", str(lab["out"]), "--wakebench", str(lab["wb"]),
            "--cases", str(lab["cases"]), *extra]
    assert main(argv) == 0
    return json.loads((lab["out"] / "matrix.json").read_text()), \
        (lab["out"] / "matrix.md").read_text()


def test_the_matrix_records_its_cases_file_and_the_guests_wakebench(lab):
    gated_guest(lab["out"] / "smt2/gated", lab["sha"])
    m, text = run(lab, "--aa", str(lab["aa"]))
    rec = m["cases"]["smt2"]
    assert rec["sha256"] == lab["sha"] and rec["git"]["committed"] is False
    assert rec["wakebench"] == ["abc123def456"]
    assert "- NOT COMMITTED (not tracked by git): smt2:" in text
    # The dropped case is listed with its reason and not judged
    assert "- smt2 / mainline / pipe/threads/kernel-5: failed: timeout" in text
    assert m["confusion"]["mainline"]["counted"] == 5
    assert m["confusion"]["mainline"]["verdict"] == "not tested"
    assert m["confusion"]["sync-pair"]["verdict"] == "goal met"
    assert m["columns"][2:] == ["gated:mainline", "gated:sync-pair", "gated:sync-core",
                                "gated:sync-core-v2", "gated:sync-2017"]
    assert m["confusion"]["gated:sync-pair"]["hit"] == 6
    # the cases tell apart only mainline and sync-pair: nothing counts for sync-2017
    assert m["confusion"]["gated:sync-2017"]["other-pairs"] == 6
    assert m["confusion"]["gated:sync-2017"]["verdict"] == "not tested"
    # the case that tells the two apart only under emulation is marked in the table and listed
    assert "| pipe/threads/kernel-4 (e) | sync |" in text
    assert "| pipe/threads/kernel-3 | sync |" in text
    assert "- smt2 / pipe/threads/kernel-4: discriminates mainline/sync-pair; natively nothing" \
        in text


def test_a_gated_setting_that_reads_back_another_state_fails(lab):
    gated_guest(lab["out"] / "smt2/gated", lab["sha"], bad_setting=2)
    m, text = run(lab)
    assert "SYNC_CORE NO_SYNC_CORE" in m["cells"]["smt2"]["gated:sync-core"]["missing"]
    assert "rows" in m["cells"]["smt2"]["gated:sync-pair"]
    assert "- gated:sync-core: the feature read-back: setting 2 (sync-core): " in text


def test_fidelity_needs_an_aa_run_and_fails_beyond_mainlines_own_tv(lab):
    gated_guest(lab["out"] / "smt2/gated", lab["sha"], off_case=True)
    m, text = run(lab)
    assert "- not tested: smt2 / gated:sync-pair vs sync-pair: no A/A run (--aa)" in text
    m, text = run(lab, "--aa", str(lab["aa"]))
    verdicts = {p: f["verdict"] for _, p, f in m["fidelity"]}
    # mainline's own TV between the runs is 0.1: 0.5 is beyond 0.1 + 0.05; 0.0 within it
    assert verdicts["sync-pair"] == "FAILS" and verdicts["mainline"] == "holds"
    assert verdicts["sync-core"] == "not tested"  # no per-patch sync-core cell here
    assert "  - FAILS pipe/threads/kernel-0: TV 0.500 > 0.100 + 0.05" in text
    # mainline's failed case is in no comparison
    assert [r["case"] for _, p, f in m["fidelity"] if p == "mainline" for r in f["cases"]] == \
        CASES[:5]


def test_an_aa_run_of_another_config_is_refused(lab):
    other = lab["wb"].parent / "other.json"
    other.write_text(lab["cases"].read_text() + "\n")
    with pytest.raises(LabError, match="smt2/mainline ran another config than"):
        run(lab, "--aa", str(lab["out"]), "--cases", str(lab["wb"].parent / "other.json"))


def test_a_cell_that_ran_another_config_does_not_count(lab):
    lab["cases"].write_text(lab["cases"].read_text() + " ")
    m, _ = run(lab)
    assert "ran another config" in m["cells"]["smt2"]["sync-pair"]["missing"]


@pytest.mark.parametrize("text, message", [
    ("{", "not a readable JSON config"),
    ('{"name": "x"}', 'not a wakebench run config'),
    ('{"cases": [{"mechanisms": ["spin"], "placements": ["kernel"]}]}',
     "no kernel-placed case of a blocking mechanism"),
])
def test_a_cases_file_that_is_not_a_config_is_refused(tmp_path, text, message, capsys):
    from wblab.cli import main as cli_main
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    argv = ["matrix", "--presets", "smt2", "--cases", f"smt2={bad}", "--out", str(tmp_path / "o")]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and f"--cases {bad}" in err, err
    assert not (tmp_path / "o").exists()


def test_unknown_kernel_is_refused(tmp_path):
    with pytest.raises(LabError, match="--kernels: unknown kernel gate "):
        main(["--kernels", "gate", "--out", str(tmp_path / "o")])


def test_a_committed_cases_file_reads_committed_unchanged(tmp_path):
    from wblab.cases import provenance
    repo = tmp_path / "r"
    repo.mkdir()
    f = repo / "c.json"
    f.write_text("{}")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "c.json"], check=True)
    subprocess.run(git + ["commit", "-qm", "c"], check=True)
    rec = provenance(f)["git"]
    assert rec["committed"] and rec["unchanged"]
    f.write_text("{ }")
    assert provenance(f)["git"]["unchanged"] is False


def test_the_gated_guest_runs_the_five_settings_zipped(lab, monkeypatch):
    import wblab.matrix
    from wblab.initramfs import guest_job
    plans = []

    def boot(plan):
        plans.append(plan)
        gated_guest(plan.out, lab["sha"])
        write(plan.out / "topology.json", {"classes": [
            {"class": c} for c in ("same-cpu", "smt-sibling", "llc")]})
        return {}, []
    monkeypatch.setattr(wblab.matrix, "run_guest", boot)
    monkeypatch.setattr(wblab.matrix, "resolve_kernel",
                        lambda image, policy, arch: ("/k/bzImage", "gated", {"policy": "gated"}))
    argv = ["--presets", "smt2", "--kernels", "gated", "--out", str(lab["out"] / "g"),
            "--wakebench", str(lab["wb"]), "--cases", str(lab["cases"]), "--timeout", "100"]
    assert main(argv) == 0
    (plan,) = plans
    assert (plan.out, plan.timeout, plan.predict) == (lab["out"] / "g/smt2/gated", 500, False)
    job = guest_job(None, plan.run_args, 400, "smt2")
    assert ("--ab feature:SYNC_PAIR=off,on,off,off,off --ab feature:SYNC_CORE=off,off,on,off,off "
            "--ab feature:SYNC_CORE_V2=off,off,off,on,off --ab feature:SYNC_2017=off,off,off,off,"
            "on") in job
    assert "--out /tmp/out/results.json" in job  # the sets come back as results-ab<k>.json
    m = json.loads((lab["out"] / "g/matrix.json").read_text())
    assert all("rows" in m["cells"]["smt2"][f"gated:{p}"] for p, _ in settings())
    assert json.loads((lab["out"] / "g/smt2/gated/sync-core/results.json").read_text())[
        "environment"]["lab_kernel"] == {"policy": "gated", "setting": 2, "features_on":
                                         "sync-core"}
