"""One line of a case's `--trace-wakeups` summary (the result set's `trace`), as the matrix lists it
under a row that falls short."""


def trace_text(trace):
    """One line of a case's `--trace-wakeups` summary (predictions.Trace): how its wakeups were
    placed, per path and class, and where its tasks migrated."""
    by = trace.classes_by_path or {}
    parts = []
    for path, n in trace.paths.items():
        classes = ", ".join(f"{c} {k}" for c, k in (by.get(path) or {}).items() if k)
        parts.append(f"{path} {n}" + (f" ({classes})" if classes else ""))
    moved = ", ".join(f"{c} {k}" for c, k in (trace.moved_by_class or {}).items() if k)
    (foreign_wakeups, foreign_moved), (at_wakeup, other) = trace.foreign, trace.migrations
    text = (f"traced {trace.wakeups} wakeups by the partner: " + "; ".join(parts)
            + f"; moved off the wakee's previous CPU {trace.moved}"
            + (f" (to {moved})" if moved else "")
            + f"; woken by another task {foreign_wakeups} (moved {foreign_moved}); task "
            f"migrations inside a wakeup {at_wakeup}, outside (load balancing) {other}")
    wakes, preempted = trace.stacked
    if wakes:
        text += (f"; onto the waker's CPU {wakes}, the waker then preempted by its wakee "
                 f"{preempted}")
    spans = [f"{k} {v.p50:g} us ({v.p5:g}-{v.p95:g}, {v.n} wakes)"
             for k, v in (trace.since_switch_out_us or {}).items() if v.n]
    if spans:
        text += "; from the wakee's switch-out to the waking, median (5th-95th): " + ", ".join(spans)
    lost = trace.dropped + trace.unmatched
    return text + (f"; {lost} events dropped or unmatched" if lost else "")
