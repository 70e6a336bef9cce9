"""What the lab is given is checked before any guest boots: -smp, -numa, matrix --aa,
--image and --presets each fail in one line (LabError, exit status 2) and no guest runs."""
import json
import tempfile

import pytest

import wblab.cli
import wblab.matrix
import wblab.matrix_collect
from wblab import LabError, resultset
from wblab.cli import main
from wblab.topology import topology_args

from resultsets import document


@pytest.fixture
def no_guest(monkeypatch):
    """A guest that would boot fails the test."""
    def boot(*_args, **_kwargs):
        raise AssertionError("a guest was booted")
    monkeypatch.setattr(wblab.cli, "run_guest", boot)
    monkeypatch.setattr(wblab.matrix, "run_guest", boot)


@pytest.mark.parametrize("smp, numa, message", [
    ("abc", None, "-smp 'abc': 'abc' is not a positive count"),
    ("4,sockets=1,cores=4,clusters=1", None, "the lab does not model clusters"),
    ("4,sockets=0,cores=4", None, "sockets: '0' is not a positive count"),
    ("4,sockets=1,cores=4", ["node,cpus=0-9"], "CPU 4 is not among -smp's 4"),
    ("4,sockets=1,cores=4", ["node,cpus=x"], "'x' is not a CPU list"),
    ("4,sockets=1,cores=4", ["cpu,socket-id=0"], "no node-id="),
    ("4,sockets=1,cores=4", ["node,nodeid=one"], "'one' is not an id"),
    ("4,sockets=1,cores=4", ["memdev,id=m"], "not 'memdev'"),
])
def test_bad_topology_is_refused_before_the_guest(smp, numa, message, no_guest, capsys):
    with pytest.raises(LabError, match=message.replace("(", r"\(")):
        topology_args(None, smp, numa)
    argv = ["--smp", smp, "--no-run"] + [a for n in numa or [] for a in ("--numa", n)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("wakebench-lab: ") and err.count("\n") == 1, err


def test_presets_are_valid_topologies():
    for preset in wblab.matrix.PRESETS:
        assert topology_args(preset)["name"] == preset


def aa_dir(tmp_path, text):
    cell = tmp_path / "aa" / "smt2" / "mainline"
    cell.mkdir(parents=True)
    (cell / "results.json").write_text(text)
    return str(tmp_path / "aa")


def histogram(hist, **case):
    return json.dumps(document([dict(case, observed={"histogram": hist})]))


@pytest.mark.parametrize("text, message", [
    ('{"schema": "wakebench-results", "cases": [', "not a readable result set"),
    ('{"cases": []}', "not a wakebench result set"),
    ('{"schema": "wakebench-results", "schema_version": 3}', r'\$: missing "cases"'),
    (histogram({"llc": 3}, name=None), r"\$.cases\[0\].name is null, not string"),
    (histogram({"llc": "many"}), r"\$.cases\[0\].observed.histogram.llc is string, not number"),
    (histogram({"llc": -1}), r"cases\[0\] has a negative count in observed.histogram"),
])
def test_matrix_aa_is_read_before_any_guest(tmp_path, text, message, no_guest, capsys):
    argv = ["matrix", "--presets", "smt2", "--kernels", "mainline", "--aa",
            aa_dir(tmp_path, text), "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "results.json" in err, err
    with pytest.raises(LabError, match=message):
        wblab.matrix_collect.observed_classes(
            resultset.load(tmp_path / "aa" / "smt2" / "mainline" / "results.json"))


def test_matrix_aa_of_the_right_shape_is_read():
    good = document([{"name": "a", "observed": {"histogram": {"llc": 3, "same-cpu": 1}}},
                     {"name": "b", "observed": None}])
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write(json.dumps(good))
        f.flush()
        assert wblab.matrix_collect.observed_classes(resultset.load(f.name)) == {
            "a": {"llc": 0.75, "same-cpu": 0.25}}


@pytest.mark.parametrize("image, message", [
    ("mainline", "expected POLICY=IMAGE"),
    ("sync-pairs={img}", "expected POLICY=IMAGE with POLICY one of"),
    ("mainline={img}.missing", "is not a file"),
])
def test_matrix_image_is_checked_before_any_guest(tmp_path, image, message, no_guest, capsys):
    img = tmp_path / "bzImage"
    img.write_bytes(b"MZ")
    argv = ["matrix", "--presets", "smt2", "--image", image.format(img=img),
            "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_matrix_unknown_preset(tmp_path, no_guest, capsys):
    assert main(["matrix", "--presets", "smt3", "--out", str(tmp_path / "out")]) == 2
    assert "--presets: unknown preset smt3" in capsys.readouterr().err
