"""The lab's progress (progress.py) on a fake clock: the counts and the ETA from the cells done, a
guest with a problem counting as done, a guest that does not boot leaving the ETA alone, and the
lines overwritten in place on a terminal, one per guest elsewhere."""
import io

import pytest

from wblab.progress import CLEAR, Progress, Relay, Step, eta_s, fmt_duration, run_step, \
    step_line
from wblab.qemurun import console_lines, run_qemu

# `wakebench run`'s case lines as runners/run/progress.cpp prints them ("[%zu/%zu] %-40s %s%s").
RUN_OK = f"[14/40] {'pipe/threads/kernel':<40} ok  median   45.5 us  p99   80.0 us  ETA 0:15"
RUN_FAILED = f"[15/40] {'futex/threads/llc ab1':<40} failed: timed out after 60 s  ETA 0:12"
RUN_LAST = f"[40/40] {'pipe/threads/kernel':<40} unsupported: no seccomp"


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    """A terminal's lines are cut to its width: the tests' terminal is wider than 100 columns."""
    monkeypatch.setenv("COLUMNS", "120")


class Clock:
    """Seconds that move only when told."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Terminal(io.StringIO):
    def isatty(self):
        return True


def go(progress, clock, step, seconds, outcome="ok", **kw):
    progress.begin(step)
    clock.now += seconds
    return progress.end(step, outcome, **kw)


def test_the_eta_comes_from_the_cells_of_the_guests_that_booted():
    a, skipped, bad, gated, nokernel, last = (
        Step("smt2 x mainline"), Step("smt2 x sync-pair", boots=False),
        Step("2llc x mainline"), Step("smt2 x gated (5 settings)", cells=5),
        Step("2llc x sync-core"), Step("4core x mainline"))
    clock, out = Clock(), io.StringIO()
    p = Progress([a, skipped, bad, gated, nokernel, last], out, clock)
    # 60 s for one cell; 5 + 1 + 1 + 1 cells to boot: 8 x 60 s
    assert go(p, clock, a, 60) == f"[1/6] {a.name:<40} ok in 1:00  ETA 8:00"
    # a guest whose results are there took no guest's time: the ETA stays
    assert go(p, clock, skipped, 2, "already ran") == \
        f"[2/6] {skipped.name:<40} already ran  ETA 8:00"
    # a guest with a problem took its time: done, its 120 s in the rate (180 s / 2 cells x 7)
    assert go(p, clock, bad, 120, "PROBLEM: no result set came back", problem=True).endswith(
        "PROBLEM: no result set came back in 2:00  ETA 10:30")
    # the gated guest fills 5 cells: 480 s / 7 cells x 2 cells left
    assert go(p, clock, gated, 300).endswith("ok in 5:00  ETA 2:17")
    # no kernel: planned to boot, did not; it leaves the cells left and the rate alone
    assert go(p, clock, nokernel, 30, "no kernel: build failed", booted=False,
              problem=True) == f"[5/6] {nokernel.name:<40} no kernel: build failed  ETA 1:08"
    assert go(p, clock, last, 60) == f"[6/6] {last.name:<40} ok in 1:00"
    assert (p.reported, p.cells_done, p.cells_left) == (6, 8, 0)
    assert out.getvalue().count("\n") == 6 and CLEAR not in out.getvalue()


def test_eta_and_durations():
    assert eta_s(100, 0, 3) is None and eta_s(100, 2, 0) is None
    assert eta_s(100, 2, 3) == 150
    assert fmt_duration(59.9) == "0:59" and fmt_duration(3725) == "62:05"


def test_a_long_outcome_is_cut_to_100_columns_keeping_the_eta():
    line = step_line(3, 12, "smt2 x sync-pair run 2/3", "PROBLEM: " + "x" * 200, 75)
    assert len(line) == 100 and line.endswith("...  ETA 1:15")


def test_a_terminal_sees_one_line_overwritten_and_the_problems_kept():
    clock, out = Clock(), Terminal()
    steps = [Step("a"), Step("b"), Step("c")]
    with Progress(steps, out, clock) as p:
        go(p, clock, steps[0], 10)
        assert out.getvalue() == CLEAR + f"[1/3] {'a':<40} running" + \
            CLEAR + f"[1/3] {'a':<40} ok in 0:10  ETA 0:20"  # no newline: overwritten next
        go(p, clock, steps[1], 10, "PROBLEM: x", problem=True)
        assert out.getvalue().endswith("PROBLEM: x in 0:10  ETA 0:10\n")  # kept
        go(p, clock, steps[2], 10)
        assert not out.getvalue().endswith("\n")
    assert out.getvalue().endswith("ok in 0:10\n")  # closed: the shell prompt starts clean
    assert out.getvalue().count("\n") == 2


def test_a_guests_run_lines_read_without_their_timings():
    assert run_step(RUN_OK) == "[14/40] pipe/threads/kernel ok  ETA 0:15"
    assert run_step(RUN_OK + "\r", eta=False) == "[14/40] pipe/threads/kernel ok"
    assert run_step(RUN_FAILED) == "[15/40] futex/threads/llc ab1 failed  ETA 0:12"
    assert run_step(RUN_LAST) == "[40/40] pipe/threads/kernel unsupported"
    for other in ("[    0.512000] smp: Bringing up secondary CPUs", "wakebench: look 1 of 4",
                  "wakebench-lab guest: step run exited 0", ""):
        assert run_step(other) is None


def test_one_guest_shows_its_run_lines_the_last_kept():
    out = Terminal()
    relay = Relay(out)
    for line in ("booting", RUN_OK, RUN_LAST):
        relay.line(line)
    assert out.getvalue() == CLEAR + "guest: [14/40] pipe/threads/kernel ok  ETA 0:15" + \
        CLEAR + "guest: [40/40] pipe/threads/kernel unsupported\n"
    relay.close()  # nothing left open
    assert out.getvalue().endswith("unsupported\n")
    out = io.StringIO()
    Relay(out).line(RUN_OK)
    assert out.getvalue() == "guest: [14/40] pipe/threads/kernel ok  ETA 0:15\n"


def test_the_matrix_shows_the_running_guests_case_on_a_terminal_only():
    clock, out = Clock(), Terminal()
    p = Progress([Step("smt2 x mainline"), Step("smt2 x sync-pair")], out, clock)
    go(p, clock, p.steps[0], 60)
    p.begin(p.steps[1])
    p.line(RUN_OK)
    assert out.getvalue().endswith(
        CLEAR + f"[2/2] {'smt2 x sync-pair':<40} running: [14/40] pipe/threads/kernel ok  ETA 1:00")
    plain = io.StringIO()
    p = Progress([Step("a")], plain, clock)
    p.begin(p.steps[0])
    p.line(RUN_OK)
    assert plain.getvalue() == ""


def test_the_console_relays_complete_lines(tmp_path):
    console = tmp_path / "console.log"
    assert console_lines(console, 0) == ([], 0)
    console.write_bytes(b"one\r\ntwo\nthr")
    lines, offset = console_lines(console, 0)
    assert (lines, offset) == (["one", "two"], 9)
    assert console_lines(console, offset) == ([], 9)  # "thr" is not a line yet
    # a stand-in qemu writing a run line, then (1 s later) a marker and a line just before it
    # exits: the first comes while it runs, the last after
    done = tmp_path / "done"
    script = (f"printf '%s\\r\\n' '{RUN_OK}' > {console}; sleep 1; touch {done}; "
              f"printf '%s\\n' '{RUN_LAST}' >> {console}")
    seen = []
    run_qemu(["sh", "-c", script], tmp_path / "xfer", console, 30, False,
             lambda line: seen.append((line, done.exists())))
    assert seen == [(RUN_OK, False), (RUN_LAST, True)]
