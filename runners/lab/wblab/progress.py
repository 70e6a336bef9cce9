"""How a long lab run goes, on stderr, in the style of `wakebench run`'s progress
(runners/run/progress.cpp): one line per guest once it is done, "[n/N] what outcome ETA m:ss". On a
terminal the line is overwritten in place (the guest that runs now shows while it runs, a guest with
a problem keeps its line); elsewhere one line per guest, nothing overwritten.

The ETA comes from the cells done so far: the seconds the guests that booted took, per cell they
filled (a gated guest fills one cell per setting), times the cells still to boot. A guest with a
problem took its time too, so it counts as done. A guest that does not boot (its results are there,
--no-run, or its kernel could not be had) takes no guest's time: it neither enters the rate nor
counts as left. While a guest runs, its own `wakebench run` case lines come from its console
(qemurun.console_lines, reduced by run_step): on a terminal they follow the guest's name on the line
that runs; a single guest (`wakebench-lab`) shows them as its progress (Relay). The text is made
from the values given and the clock passed in, so it is tested with a fake clock."""
import re
import shutil
import sys
import time
from dataclasses import dataclass

WIDTH = 100  # at most this many columns (fewer on a narrower terminal)
CLEAR = "\r\x1b[K"  # back to the line's start and clear it


@dataclass(frozen=True)
class Step:
    """One guest of the plan: what it is called, the cells it fills, whether it boots."""
    name: str
    cells: int = 1
    boots: bool = True


def fmt_duration(s):
    """"m:ss", minutes unbounded (run's fmt_duration)."""
    s = int(s)
    return f"{s // 60}:{s % 60:02d}"


def eta_s(spent_s, cells_done, cells_left):
    """Seconds left at the rate of the cells done, or None before any is done or with none left."""
    if cells_done <= 0 or cells_left <= 0:
        return None
    return spent_s * cells_left / cells_done


def step_line(n, total, name, outcome, eta, width=WIDTH):
    """"[n/total] name  outcome  ETA m:ss", cut to `width` columns."""
    tail = f"  ETA {fmt_duration(eta)}" if eta is not None else ""
    line = f"[{n}/{total}] {name:<40} {outcome}"
    if len(line) + len(tail) > width:
        line = line[:max(0, width - len(tail) - 3)] + "..."
    return line + tail


# `wakebench run`'s case line (runners/run/progress.cpp): "[n/N] case  ok  median ... ETA m:ss".
# With --ab the case carries its setting's tag (" ab1").
RUN_CASE = re.compile(r"^(\[\d+/\d+\]) (\S+(?: ab\d+)?) +(\S+?):?(?: .*?)?(  ETA \d+:\d\d)?$")


def run_step(line, eta=True):
    """A guest's `wakebench run` case line as "[n/N] case outcome  ETA m:ss" (without run's ETA
    unless `eta`): its timings left out (a guest's are EMULATED under TCG, and never shown
    unlabelled); None for another line."""
    m = RUN_CASE.match(line.rstrip())
    return f"{m[1]} {m[2]} {m[3]}{(m[4] or '') if eta else ''}" if m else None


class Lines:
    """Lines to `out`: on a terminal each overwrites the last unless kept, elsewhere one a line."""

    def __init__(self, out=None, tty=None):
        self.out = out if out is not None else sys.stderr
        self.tty = self.out.isatty() if tty is None else tty
        self.pending = False  # a line without its newline (a terminal only)

    def width(self):
        return min(WIDTH, shutil.get_terminal_size((WIDTH, 24)).columns - 1) if self.tty \
            else WIDTH

    def show(self, line, keep):
        if self.tty:
            self.out.write(CLEAR + line[:self.width()] + ("\n" if keep else ""))
            self.pending = not keep
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def close(self):
        """Ends a line left open on a terminal (before anything else is written there)."""
        if self.pending:
            self.out.write("\n")
            self.out.flush()
            self.pending = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class Relay(Lines):
    """One guest's own `wakebench run` case lines (run_step), prefixed "guest: ", as its progress:
    run's ETA comes from the round trips done. Its last case keeps its line."""

    def line(self, text):
        step = run_step(text)
        if step is not None:
            n, total = step[1:step.index("]")].split("/")
            self.show("guest: " + step, keep=n == total)


class Progress(Lines):
    """The progress of `steps` (Steps) written to `out`; `clock` gives seconds (monotonic)."""

    def __init__(self, steps, out=None, clock=time.monotonic, tty=None):
        super().__init__(out, tty)
        self.steps = list(steps)
        self.clock = clock
        self.reported = 0
        self.spent = 0.0  # seconds of the guests that booted
        self.cells_done = 0
        self.cells_left = sum(s.cells for s in self.steps if s.boots)
        self.started = None
        self.current = None

    def eta(self):
        return eta_s(self.spent, self.cells_done, self.cells_left)

    def begin(self, step):
        """`step` starts: its time counts from now; a terminal shows that it runs."""
        self.started, self.current = self.clock(), step
        if self.tty and step.boots:
            self.running("running")

    def running(self, what):
        self.show(step_line(self.reported + 1, len(self.steps), self.current.name, what,
                            self.eta(), self.width()), keep=False)

    def line(self, text):
        """A line of the running guest's console: on a terminal its `run` case line (run_step,
        without run's own ETA) follows the guest's name; elsewhere nothing (one line per
        guest)."""
        step = run_step(text, eta=False)
        if self.tty and self.current is not None and step is not None:
            self.running("running: " + step)

    def end(self, step, outcome, booted=None, problem=False):
        """`step` is done with `outcome` (one phrase); `booted` (default step.boots) says whether
        a guest ran, `problem` keeps the line on a terminal. Returns the line."""
        took = self.clock() - self.started if self.started is not None else 0.0
        self.started = self.current = None
        booted = step.boots if booted is None else booted
        if step.boots:
            self.cells_left -= step.cells
        if booted:
            self.spent += took
            self.cells_done += step.cells
            outcome = f"{outcome} in {fmt_duration(took)}"
        self.reported += 1
        line = step_line(self.reported, len(self.steps), step.name, outcome, self.eta(),
                         self.width())
        self.show(line, keep=problem or not self.tty)
        return line
