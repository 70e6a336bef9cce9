"""One line of a case's `--trace-wakeups` summary (the result set's `trace`), as the matrix lists it
under a row that falls short."""


def trace_text(trace):
    """One line of a case's `--trace-wakeups` summary (result set `trace`): how its wakeups were
    placed, per path and class, and where its tasks migrated."""
    by = trace.get("classes_by_path") or {}
    parts = []
    for path, n in (trace.get("paths") or {}).items():
        classes = ", ".join(f"{c} {k}" for c, k in (by.get(path) or {}).items() if k)
        parts.append(f"{path} {n}" + (f" ({classes})" if classes else ""))
    mig = trace.get("migrations") or {}
    moved = ", ".join(f"{c} {k}" for c, k in (trace.get("moved_by_class") or {}).items() if k)
    foreign = trace.get("foreign") or {}
    text = (f"traced {trace.get('wakeups', 0)} wakeups by the partner: " + "; ".join(parts)
            + f"; moved off the wakee's previous CPU {trace.get('moved', 0)}"
            + (f" (to {moved})" if moved else "")
            + f"; woken by another task {foreign.get('wakeups', 0)} (moved "
            f"{foreign.get('moved', 0)}); task migrations inside a wakeup "
            f"{mig.get('at_wakeup', 0)}, outside (load balancing) {mig.get('other', 0)}")
    stacked = trace.get("stacked") or {}
    if stacked.get("wakes"):
        text += (f"; onto the waker's CPU {stacked['wakes']}, the waker then preempted by its "
                 f"wakee {stacked.get('waker_preempted', 0)}")
    since = trace.get("since_switch_out_us") or {}
    spans = [f"{k} {v['p50']:g} us ({v['p5']:g}-{v['p95']:g}, {v['n']} wakes)"
             for k, v in since.items() if v.get("n")]
    if spans:
        text += "; from the wakee's switch-out to the waking, median (5th-95th): " + ", ".join(spans)
    lost = trace.get("dropped", 0) + trace.get("unmatched", 0)
    return text + (f"; {lost} events dropped or unmatched" if lost else "")

