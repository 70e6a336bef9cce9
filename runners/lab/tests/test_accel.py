"""--accel tcg|kvm: the qemu arguments, the labels on the result set and the guest job, and the
one-line refusal without /dev/kvm (nothing here boots a guest)."""
import signal

import pytest

import wblab.cli
import wblab.qemu
from wblab import BANNER, LabError
from wblab.cli import main
from wblab.guest import GuestPlan, label_results, print_cases, qemu_command
from wblab.initramfs import guest_job
from wblab.qemu import KVM_BANNER, accel_args, check_kvm
from wblab.qemubin import Qemu

from resultsets import typed


X86_QEMU = Qemu("qemu-system-x86_64", (7, 2, 0), "QEMU emulator version 7.2.0")


def plan(accel, tcg_thread="single"):
    return GuestPlan("smt2", "4,sockets=1,cores=2,threads=2", [], "Skylake-Server", "/k/bzImage",
                     "mainline", {"policy": "mainline"}, "/b/wakebench", None, "/tmp/o",
                     tcg_thread=tcg_thread, accel=accel)


def test_accel_args():
    assert accel_args("tcg") == ["-accel", "tcg,thread=single"]
    assert accel_args("tcg", "multi") == ["-accel", "tcg,thread=multi"]
    assert accel_args("kvm") == ["-accel", "kvm"]
    with pytest.raises(LabError, match="--tcg-thread applies to --accel tcg only"):
        accel_args("kvm", "multi")
    with pytest.raises(LabError, match="one of tcg, kvm"):
        accel_args("hvf")


def test_kvm_command_keeps_cpu_model_and_smp():
    cmd = qemu_command(plan("kvm"), X86_QEMU, "/i", "/c", "/x")
    assert cmd[1:3] == ["-accel", "kvm"] and "tcg" not in " ".join(cmd)
    assert cmd[cmd.index("-cpu") + 1] == "Skylake-Server"
    assert cmd[cmd.index("-smp") + 1] == "4,sockets=1,cores=2,threads=2"
    tcg = qemu_command(plan("tcg", "multi"), X86_QEMU, "/i", "/c", "/x")
    assert tcg[1:3] == ["-accel", "tcg,thread=multi"] and tcg[3:] == cmd[3:]


def result_set():
    return {"environment": {"hostname": "h"}, "context": {}, "predictions": {}, "cases": []}


def test_tcg_result_set_is_emulated_everywhere():
    rs = result_set()
    label_results(rs, ["qemu-system-x86_64", "-accel", "tcg,thread=single"], plan("tcg"),
                  X86_QEMU.banner)
    env = rs["environment"]
    assert env["emulated"] is True and env["emulation"]["accelerator"] == "tcg"
    assert "EMULATED" in env["emulation"]["note"]
    assert rs["context"]["emulated"] is True and rs["predictions"]["emulated"] is True


def test_kvm_result_set_is_not_emulated():
    rs = result_set()
    label_results(rs, ["qemu-system-x86_64", "-accel", "kvm"], plan("kvm"), X86_QEMU.banner)
    env = rs["environment"]
    # environment.emulated false: host-side `wakebench predict --results` leaves out the slow
    # switch-out alternatives it adds for a TCG guest.
    assert env["emulated"] is False and env["emulation"]["accelerator"] == "kvm"
    assert "EMULATED" not in env["emulation"]["note"]
    assert env["emulation"]["qemu_command"] == "qemu-system-x86_64 -accel kvm"
    assert rs["context"]["emulated"] is False and rs["predictions"]["emulated"] is False
    assert env["lab_kernel"] == {"policy": "mainline"}


def test_guest_job_labels_follow_the_accelerator():
    tcg = guest_job(None, [], 100, "smt2")
    kvm = guest_job(None, [], 100, "smt2", accel="kvm")
    assert "hostname wakebench-lab-smt2-emulated" in tcg and BANNER in tcg
    assert "hostname wakebench-lab-smt2-kvm" in kvm and KVM_BANNER in kvm
    assert "EMULATED" not in kvm and "emulated" not in kvm


def test_case_table_labels_follow_the_accelerator(capsys):
    rs = typed([{"rtt_ns": {"median": 9.0}}])
    print_cases(rs, [], "kvm")
    out = capsys.readouterr().out
    assert KVM_BANNER in out and "median RTT ns (KVM guest)" in out and "EMULATED" not in out
    print_cases(rs, [])
    assert "median RTT ns (EMULATED)" in capsys.readouterr().out


def test_check_kvm_names_the_missing_device(tmp_path):
    with pytest.raises(LabError, match=f"--accel kvm: no {tmp_path}/kvm .*use --accel tcg"):
        check_kvm(tmp_path / "kvm")
    (tmp_path / "kvm").touch()
    check_kvm(tmp_path / "kvm")


def test_check_with_kvm_missing_is_one_line_exit_3(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(wblab.qemu, "KVM_DEVICE", str(tmp_path / "kvm"))
    assert main(["--check", "--accel", "kvm"]) == 3
    err = capsys.readouterr().err.splitlines()
    assert err == [f"wakebench-lab: missing prerequisite: --accel kvm: no {tmp_path}/kvm "
                   "(KVM is off or absent here: use --accel tcg)"]


def test_kvm_with_tcg_thread_is_refused_before_anything(capsys):
    assert main(["--preset", "smt2", "--accel", "kvm", "--tcg-thread", "multi"]) == 2
    assert capsys.readouterr().err == \
        "wakebench-lab: --tcg-thread applies to --accel tcg only\n"


def test_every_nonzero_exit_says_why(monkeypatch, capsys):
    def interrupted(argv):
        raise KeyboardInterrupt
    monkeypatch.setattr(wblab.cli, "main_one", interrupted)
    assert main(["--preset", "smt2"]) == 130
    assert capsys.readouterr().err == "wakebench-lab: interrupted (SIGINT)\n"
    with pytest.raises(SystemExit) as stop:
        wblab.cli.raise_on_signal(signal.SIGHUP, None)
    assert stop.value.code == 128 + signal.SIGHUP
    assert capsys.readouterr().err == "wakebench-lab: stopped by SIGHUP\n"
