"""Which qemu a preset runs on: the host's when it is new enough, else fetch-qemu.sh's copy in the
lab cache, else one line naming the version it needs (fake qemu binaries; nothing boots)."""
import pytest

from wblab import LabError
from wblab.qemu import PRESETS
from wblab.qemubin import Qemu, choose, command_prefix, parse_version, probe


def fake_qemu(path, version):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho 'QEMU emulator version {version} (Debian test)'\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A host whose PATH holds qemu-system-ppc64 7.2.0 only."""
    fake_qemu(tmp_path / "bin" / "qemu-system-ppc64", "7.2.0")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv("WB_LAB_QEMU", raising=False)
    probe.cache_clear()
    return tmp_path


def cached(cache, version):
    root = cache / "qemu" / f"{version}+ds-test"
    fake_qemu(root / "usr" / "bin" / "qemu-system-ppc64", version)
    (root / "version").write_text(f"QEMU emulator version {version} (Debian test)\n")
    return root


def test_parse_version():
    assert parse_version("QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2)") == (10, 0, 2)
    assert parse_version("QEMU emulator version 7.2") == (7, 2, 0)
    assert parse_version("qemu-img version 7.2.0") is None


def test_the_host_qemu_when_it_is_new_enough(host):
    q = choose("qemu-system-ppc64", needs=(7, 0), cache=host / "cache")
    assert (q.path, q.version, q.data_dirs) == (str(host / "bin" / "qemu-system-ppc64"),
                                                (7, 2, 0), ())
    assert choose("qemu-system-ppc64", cache=host / "cache").version == (7, 2, 0)


def test_a_preset_that_needs_10_takes_the_cached_one_with_its_firmware(host):
    cached(host / "cache", "9.2.0")
    root = cached(host / "cache", "10.0.2")
    q = choose("qemu-system-ppc64", ("/usr/share/seabios",), (10, 0), cache=host / "cache")
    assert q.version == (10, 0, 2) and q.path == str(root / "usr/bin/qemu-system-ppc64")
    assert command_prefix(q) == [q.path, "-L", str(root / "usr/share/qemu"),
                                 "-L", "/usr/share/seabios"]


def test_no_qemu_new_enough_is_one_line_before_anything_boots(host):
    cached(host / "cache", "9.2.0")
    with pytest.raises(LabError) as e:
        choose("qemu-system-ppc64", needs=(10, 0), cache=host / "cache")
    assert str(e.value) == ("this preset needs qemu >= 10.0 and the host has 7.2.0: "
                            "runners/lab/fetch-qemu.sh puts Debian's bookworm-backports qemu 10 "
                            "into the lab cache")


def test_wb_lab_qemu_is_held_to_the_preset_too(host, monkeypatch):
    monkeypatch.setenv("WB_LAB_QEMU", str(host / "bin" / "qemu-system-ppc64"))
    cached(host / "cache", "10.0.2")
    with pytest.raises(LabError, match="is qemu 7.2.0; this preset needs 10.0"):
        choose("qemu-system-ppc64", needs=(10, 0), cache=host / "cache")
    monkeypatch.setenv("WB_LAB_QEMU", "/nonexistent/qemu")
    with pytest.raises(LabError, match="WB_LAB_QEMU=/nonexistent/qemu: not found"):
        choose("qemu-system-ppc64", cache=host / "cache")


def test_missing_qemu_names_the_package(host):
    with pytest.raises(LabError, match=r"qemu-system-aarch64 not installed \(apt-get install "
                                       r"qemu-system-arm\)"):
        choose("qemu-system-aarch64", package="qemu-system-arm", cache=host / "cache")


def test_not_a_qemu_is_refused(host):
    bad = host / "bin" / "qemu-system-x86_64"
    bad.write_text("#!/bin/sh\necho hello\n")
    bad.chmod(0o755)
    with pytest.raises(LabError, match="not a qemu"):
        choose("qemu-system-x86_64", cache=host / "cache")


def test_every_power_preset_needs_qemu_10():
    power = [p for p, v in PRESETS.items() if v.get("arch") == "ppc64le"]
    assert power and all(PRESETS[p]["qemu"] >= (10, 0) for p in power)
    assert isinstance(Qemu("q", (10, 0, 2), "b"), Qemu)
