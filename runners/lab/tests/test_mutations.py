"""patches/mutations/: each is a fair.c-only diff whose header says what it changes and when its
marker fires; each but the decision-neutral one adds one wb_mark() call, which the event header
defines; none removes a line the decision event's edits label. Where the lab's pristine 6.12 tree
is in the kernel cache, each is also applied to it with the event after it, as --patch does (no
build); elsewhere that test is skipped."""
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kerneltree as kt  # noqa: E402
import kerneluser as ku  # noqa: E402
from wblab import tracepatch  # noqa: E402

MUTATIONS = Path(__file__).resolve().parents[1] / "patches" / "mutations"
NAMES = ["sibling-first", "recent-skip", "wake-wide-x2", "neutral-reorder", "unreached"]
NEUTRAL = {"neutral-reorder"}


def parts(name):
    """(header, [added lines], [removed lines]) of a mutation patch."""
    text = (MUTATIONS / f"{name}.patch").read_text()
    header, diff = text.split("--- a/kernel/sched/fair.c\n", 1)
    lines = diff.splitlines()
    added = [x[1:] for x in lines if x.startswith("+") and not x.startswith("+++ ")]
    removed = [x[1:] for x in lines if x.startswith("-")]
    return header, added, removed


def test_the_folder_holds_the_named_mutations():
    assert sorted(p.stem for p in MUTATIONS.glob("*.patch")) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_each_touches_fair_c_and_says_what_and_when(name):
    files = ku.diff_files((MUTATIONS / f"{name}.patch").read_text())
    assert [f[0] for f in files] == ["kernel/sched/fair.c"]
    header, added, _ = parts(name)
    assert "Changes:" in header and "Marker:" in header
    marker = header.split("Marker:", 1)[1]
    calls = [x for x in added if x.strip() == "wb_mark();"]
    if name in NEUTRAL:
        assert calls == [] and marker.split()[0] == "none"
    else:
        assert len(calls) == 1 and marker.split()[0] == "wb_mark()"
    assert len(added) <= 15  # a few lines


def test_wb_mark_is_the_events_own():
    h = (tracepatch.HEADERS / "wb_decision.h").read_text()
    assert "static __always_inline void wb_mark(void)" in h
    assert "\td->mark = false;\n" in tracepatch.FAIR_TAIL
    assert "cpu=%d mark=%d\"" in (tracepatch.HEADERS / "wb_decision_trace.h").read_text()


@pytest.mark.parametrize("name", NAMES)
def test_no_labelled_line_is_removed(name):
    labelled = {line for _, old, _ in tracepatch.FAIR_EDITS for line in old.splitlines()
                if line.strip()}
    assert [x for x in parts(name)[2] if x in labelled] == []


def pristine_tree():
    trees = sorted(kt.cache_dir().glob("tree-6.12.*/pristine")) if kt.cache_dir().is_dir() else []
    return trees[-1] if trees and (trees[-1] / "kernel/sched/fair.c").is_file() else None


@pytest.mark.skipif(shutil.which("patch") is None or pristine_tree() is None,
                    reason="no patch, or no lab kernel tree in the cache")
@pytest.mark.parametrize("name", NAMES)
def test_each_applies_with_the_event_after_it(name, tmp_path):
    root, event, moved = ku.patched_sched(MUTATIONS / f"{name}.patch", pristine_tree(), tmp_path)
    assert moved == []
    fair = (root / "kernel/sched/fair.c").read_text()
    assert ("wb_mark();" in fair) == (name not in NEUTRAL)
    assert '#include "wb_decision.h"' in fair
