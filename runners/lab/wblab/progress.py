"""How a long lab run goes, on stderr, in the style of `wakebench run`'s progress
(runners/run/progress.cpp): one line per guest once it is done, "[n/N] what  outcome  ETA m:ss".
On a terminal the line is overwritten in place (the guest that runs now shows while it runs, a
guest with a problem keeps its line); elsewhere one line per guest, nothing overwritten.

The ETA comes from the cells done so far: the seconds the guests that booted took, per cell they
filled (a gated guest fills one cell per setting), times the cells still to boot. A guest with a
problem took its time too, so it counts as done. A guest that does not boot (its results are
there, --no-run, or its kernel could not be had) takes no guest's time: it neither enters the
rate nor counts as left. The text is made from the values given and the clock passed in, so it is
tested with a fake clock."""
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


class Progress:
    """The progress of `steps` (Steps) written to `out`; `clock` gives seconds (monotonic)."""

    def __init__(self, steps, out=None, clock=time.monotonic, tty=None):
        self.steps = list(steps)
        self.out = out if out is not None else sys.stderr
        self.clock = clock
        self.tty = self.out.isatty() if tty is None else tty
        self.reported = 0
        self.spent = 0.0  # seconds of the guests that booted
        self.cells_done = 0
        self.cells_left = sum(s.cells for s in self.steps if s.boots)
        self.started = None
        self.pending = False  # a line without its newline (a terminal only)

    def width(self):
        return min(WIDTH, shutil.get_terminal_size((WIDTH, 24)).columns - 1) if self.tty \
            else WIDTH

    def eta(self):
        return eta_s(self.spent, self.cells_done, self.cells_left)

    def begin(self, step):
        """`step` starts: its time counts from now; a terminal shows that it runs."""
        self.started = self.clock()
        if self.tty and step.boots:
            self.show(step_line(self.reported + 1, len(self.steps), step.name, "running",
                              self.eta(), self.width()), keep=False)

    def end(self, step, outcome, booted=None, problem=False):
        """`step` is done with `outcome` (one phrase); `booted` (default step.boots) says whether
        a guest ran, `problem` keeps the line on a terminal. Returns the line."""
        took = self.clock() - self.started if self.started is not None else 0.0
        self.started = None
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

    def show(self, line, keep):
        if self.tty:
            self.out.write(CLEAR + line + ("\n" if keep else ""))
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
