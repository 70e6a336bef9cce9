"""The decision-event patches (patches/trace/<series>.patch): one per policy series, applied after
that series' policy patches, part of no policy (runners/lab/KERNELS.md, "The decision event").

The policy patches change select_idle_sibling()'s and select_idle_cpu()'s signatures, so one patch
cannot fit every series: `instrument()` makes the same edits to each series' patched fair.c and
core.c, and `series_patch()` writes the difference as that series' patch. Every edit is a note
behind the event's static branch (kernel/sched/wb_decision.h, in trace/): a return wrapped in
wb_ret(), a value passed through wb_note_*(), the capture and the emit in select_task_rq() and at
try_to_wake_up()'s two bypasses. Pure text functions; `write_patches()` does the I/O.
"""
import difflib
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
HEADERS = HERE / "trace"
NEW_FILES = ["wb_decision.h", "wb_decision_trace.h"]


class EditError(Exception):
    pass


def sub(text, old, new, where):
    """`old` replaced by `new`; exactly one occurrence, else EditError naming `where`."""
    n = text.count(old)
    if n != 1:
        raise EditError(f"{where}: expected one match, found {n}: {old.splitlines()[0].strip()!r}")
    return text.replace(old, new)


def resub(text, pattern, repl, where, required):
    out, n = re.subn(pattern, repl, text, count=1)
    if n != 1 and required:
        raise EditError(f"{where}: no match for {pattern!r}")
    return out


# (where, old, new): mainline's returns and values, in every series.
FAIR_EDITS = [
    ("include", '#include "autogroup.h"\n', '#include "autogroup.h"\n#include "wb_decision.h"\n'),
    ("record_wakee", "\t\tcurrent->wakee_flip_decay_ts = jiffies;\n\t}\n\n\tif (current->last_wakee != p) {",
     "\t\tcurrent->wakee_flip_decay_ts = jiffies;\n\t}\n\n\twb_note_flips(p);\n"
     "\tif (current->last_wakee != p) {"),
    ("wake_wide", "\tif (slave < factor || master < slave * factor)\n\t\treturn 0;\n\treturn 1;\n}",
     "\tif (slave < factor || master < slave * factor)\n\t\treturn wb_note_wide(0);\n"
     "\treturn wb_note_wide(1);\n}"),
    ("wake_affine WA_IDLE", "\t\ttarget = wake_affine_idle(this_cpu, prev_cpu, sync);\n",
     "\t\ttarget = wake_affine_idle(this_cpu, prev_cpu, sync);\n"
     "\twb_note_affine_test(WB_WA_IDLE, target);\n"),
    ("wake_affine WA_WEIGHT", "\t\ttarget = wake_affine_weight(sd, p, this_cpu, prev_cpu, sync);\n",
     "\t\ttarget = wake_affine_weight(sd, p, this_cpu, prev_cpu, sync);\n"
     "\twb_note_affine_test(WB_WA_WEIGHT, target);\n"),
    ("wake_affine_weight waker", "\tthis_eff_load = cpu_load(cpu_rq(this_cpu));\n\n\tif (sync) {\n"
     "\t\tunsigned long current_load = task_h_load(current);\n\n",
     "\tthis_eff_load = cpu_load(cpu_rq(this_cpu));\n"
     "\twb_note_loads(this_eff_load, this_cpu, prev_cpu);\n\n\tif (sync) {\n"
     "\t\tunsigned long current_load = task_h_load(current);\n\n"
     "\t\twb_note_load(waker_h, current_load);\n"),
    ("wake_affine_weight wakee", "\ttask_load = task_h_load(p);\n\n\tthis_eff_load += task_load;",
     "\ttask_load = task_h_load(p);\n\twb_note_load(wakee_h, task_load);\n\n"
     "\tthis_eff_load += task_load;"),
    ("wake_affine_weight prev", "\tprev_eff_load = cpu_load(cpu_rq(prev_cpu));\n",
     "\tprev_eff_load = cpu_load(cpu_rq(prev_cpu));\n\twb_note_load(prev_cpu, prev_eff_load);\n"),
    ("wake_affine prev", "\tif (target != this_cpu)\n\t\treturn prev_cpu;\n",
     "\tif (target != this_cpu)\n\t\treturn wb_affine_ret(prev_cpu);\n"),
    ("wake_affine this", "\tschedstat_inc(p->stats.nr_wakeups_affine);\n\treturn target;",
     "\tschedstat_inc(p->stats.nr_wakeups_affine);\n\treturn wb_affine_ret(target);"),
    ("sis target", "\t    asym_fits_cpu(task_util, util_min, util_max, target))\n\t\treturn target;",
     "\t    asym_fits_cpu(task_util, util_min, util_max, target))\n"
     "\t\treturn wb_ret(WB_SIS_TARGET, target);"),
    ("sis prev", "\t\t    cpus_share_resources(prev, target))\n\t\t\treturn prev;",
     "\t\t    cpus_share_resources(prev, target))\n\t\t\treturn wb_ret(WB_SIS_PREV, prev);"),
    ("sis kthread", "\t    asym_fits_cpu(task_util, util_min, util_max, prev)) {\n\t\treturn prev;",
     "\t    asym_fits_cpu(task_util, util_min, util_max, prev)) {\n"
     "\t\treturn wb_ret(WB_SIS_KTHREAD, prev);"),
    ("sis recent", "\t\t    cpus_share_resources(recent_used_cpu, target))\n\t\t\treturn recent_used_cpu;",
     "\t\t    cpus_share_resources(recent_used_cpu, target))\n"
     "\t\t\treturn wb_ret(WB_SIS_RECENT, recent_used_cpu);"),
    ("sis capacity", "\t\t\treturn ((unsigned)i < nr_cpumask_bits) ? i : target;",
     "\t\t\treturn wb_ret(WB_SIS_CAPACITY, ((unsigned)i < nr_cpumask_bits) ? i : target);"),
    ("sis no llc", "\tsd = rcu_dereference(per_cpu(sd_llc, target));\n\tif (!sd)\n\t\treturn target;",
     "\tsd = rcu_dereference(per_cpu(sd_llc, target));\n\tif (!sd)\n"
     "\t\treturn wb_ret(WB_SIS_NO_LLC, target);"),
    ("sis smt", "\t\t\ti = select_idle_smt(p, sd, prev);\n\t\t\tif ((unsigned int)i < nr_cpumask_bits)\n"
     "\t\t\t\treturn i;",
     "\t\t\ti = select_idle_smt(p, sd, prev);\n\t\t\tif ((unsigned int)i < nr_cpumask_bits)\n"
     "\t\t\t\treturn wb_ret(WB_SIS_SMT, i);"),
    ("sis fallbacks", "\tif ((unsigned int)prev_aff < nr_cpumask_bits)\n\t\treturn prev_aff;\n"
     "\tif ((unsigned int)recent_used_cpu < nr_cpumask_bits)\n\t\treturn recent_used_cpu;\n\n"
     "\treturn target;\n}",
     "\tif ((unsigned int)prev_aff < nr_cpumask_bits)\n\t\treturn wb_ret(WB_SIS_PREV_AFF, prev_aff);\n"
     "\tif ((unsigned int)recent_used_cpu < nr_cpumask_bits)\n"
     "\t\treturn wb_ret(WB_SIS_RECENT_FALLBACK, recent_used_cpu);\n\n"
     "\treturn wb_ret(WB_SIS_TARGET_FALLBACK, target);\n}"),
    ("WF_CURRENT_CPU", "(wake_flags & WF_CURRENT_CPU) &&\n\t\t    cpumask_test_cpu(cpu, p->cpus_ptr))\n"
     "\t\t\treturn cpu;",
     "(wake_flags & WF_CURRENT_CPU) &&\n\t\t    cpumask_test_cpu(cpu, p->cpus_ptr))\n"
     "\t\t\treturn wb_ret(WB_WF_CURRENT_CPU, cpu);"),
    ("feec", "\t\t\tif (new_cpu >= 0)\n\t\t\t\treturn new_cpu;",
     "\t\t\tif (new_cpu >= 0)\n\t\t\t\treturn wb_ret(WB_FEEC, new_cpu);"),
    ("want_affine", "\t\twant_affine = !wake_wide(p) && cpumask_test_cpu(cpu, p->cpus_ptr);",
     "\t\twant_affine = wb_note_want_affine(!wake_wide(p) &&\n"
     "\t\t\t\t\t\t  cpumask_test_cpu(cpu, p->cpus_ptr));"),
    ("slow path", "\t\tnew_cpu = sched_balance_find_dst_cpu(sd, p, cpu, prev_cpu, sd_flag);",
     "\t\tnew_cpu = wb_ret(WB_SLOW_PATH,\n"
     "\t\t\t\t sched_balance_find_dst_cpu(sd, p, cpu, prev_cpu, sd_flag));"),
]

# (where, pattern, replacement, anchor): the select_idle_cpu() return (sync-core adds an
# argument) and the policies' own returns; each is required where its anchor is in fair.c (None:
# always), so a series that carries a policy cannot lose its hook's rule.
FAIR_PATTERNS = [
    ("sis select_idle_cpu", r"(\n\ti = select_idle_cpu\([^\n]*\);\n\tif \(\(unsigned\)i < nr_cpumask_bits\)\n"
     r"\t\treturn) i;", r"\1 wb_ret(WB_SIS_IDLE_CPU, i);", None),
    ("sync-pair hook", r"(prefer_sync_pair_cpu\(p, cpu\)\) \{\n\t+rcu_read_unlock\(\);\n\t+return) cpu;",
     r"\1 wb_ret(WB_HOOK_AFTER_WAKE_AFFINE, cpu);", "prefer_sync_pair_cpu(p, cpu))"),
    ("sync-2017 hook", r"(!sync_wake_cap\(p, cpu, prev_cpu\)\)\n\t+return) cpu;",
     r"\1 wb_ret(WB_HOOK_BEFORE_DOMAIN_WALK, cpu);", "!sync_wake_cap(p, cpu, prev_cpu)"),
    ("sync-core-v2 hook", r"(i = select_idle_sync_core\(p, sd, target\);\n\t+if \(\(unsigned int\)i < "
     r"nr_cpumask_bits\)\n\t+return) i;", r"\1 wb_ret(WB_HOOK_SYNC_CORE, i);",
     "= select_idle_sync_core(p, sd, target);"),
]

FAIR_TAIL = """
#ifdef CONFIG_SMP
/* wakebench lab only: the sched_wake_decision event (wb_decision.h). */
#define CREATE_TRACE_POINTS
#include "wb_decision_trace.h"

DEFINE_PER_CPU(struct wb_decision, wb_decision);

static void wb_llc_hints(int cpu, bool *has_idle_cores, int *nr_idle_scan)
{
\tstruct sched_domain_shared *sds = rcu_dereference(per_cpu(sd_llc_shared, cpu));

\t*has_idle_cores = sds && READ_ONCE(sds->has_idle_cores);
\t*nr_idle_scan = sds ? READ_ONCE(sds->nr_idle_scan) : -1;
}

bool __wb_decision_begin(struct task_struct *p, int prev, int wake_flags)
{
\tstruct wb_decision *d = this_cpu_ptr(&wb_decision);
\tstruct rq *rq = this_rq();
\tint c;

\tif (!(wake_flags & WF_TTWU) || p->sched_class != &fair_sched_class)
\t\treturn false;
\td->prev = prev;
\td->wake_flags = wake_flags;
\td->waker_flips = current->wakee_flips;
\td->wakee_flips = p->wakee_flips;
\td->last_wakee = current->last_wakee == p;
\td->wakee_last_wakee = p->last_wakee == current;
\td->on_rq = READ_ONCE(p->on_rq);
\td->on_cpu = READ_ONCE(p->on_cpu);
\td->kthread = is_per_cpu_kthread(current);
\td->in_task = in_task();
\td->recent_used_cpu = READ_ONCE(p->recent_used_cpu);
\td->waker_nr_running = READ_ONCE(rq->nr_running);
\td->waker_delayed = cfs_h_nr_delayed(rq);
\td->prev_nr_running = READ_ONCE(cpu_rq(prev)->nr_running);
\trcu_read_lock();
\twb_llc_hints(cpu_of(rq), &d->has_idle_cores, &d->nr_idle_scan);
\twb_llc_hints(prev, &d->prev_has_idle_cores, &d->prev_nr_idle_scan);
\trcu_read_unlock();
\tcpumask_clear(&d->idle);
\tfor_each_online_cpu(c)
\t\tif (available_idle_cpu(c) || sched_idle_cpu(c))
\t\t\t__cpumask_set_cpu(c, &d->idle);
\td->wake_wide = false;
\td->want_affine = false;
\td->affine = WB_WA_NONE;
\td->affine_cpu = -1;
\td->rule = WB_RULE_NONE;
\td->loads = false;
\td->mark = false;
\tmemset(&d->l, 0, sizeof(d->l));
\treturn true;
}

void __wb_decision_end(struct task_struct *p, int cpu)
{
\ttrace_sched_wake_decision(p, this_cpu_ptr(&wb_decision), cpu);
}
#endif /* CONFIG_SMP */
"""

CORE_EDITS = [
    ("include", '#include "sched.h"\n#include "stats.h"\n',
     '#include "sched.h"\n#include "stats.h"\n#include "wb_decision.h"\n'),
    ("select_task_rq", "int select_task_rq(struct task_struct *p, int cpu, int *wake_flags)\n{\n"
     "\tlockdep_assert_held(&p->pi_lock);\n",
     "int select_task_rq(struct task_struct *p, int cpu, int *wake_flags)\n{\n"
     "\tbool wb = wb_decision_begin(p, cpu, *wake_flags);\n\tint wb_rule = WB_RULE_NONE;\n\n"
     "\tlockdep_assert_held(&p->pi_lock);\n"),
    ("one allowed CPU", "\t} else {\n\t\tcpu = cpumask_any(p->cpus_ptr);\n\t}\n",
     "\t} else {\n\t\tcpu = cpumask_any(p->cpus_ptr);\n\t\twb_rule = WB_NR_CPUS_ALLOWED_1;\n\t}\n"),
    ("select_fallback_rq", "\tif (unlikely(!is_cpu_allowed(p, cpu)))\n"
     "\t\tcpu = select_fallback_rq(task_cpu(p), p);\n\n\treturn cpu;",
     "\tif (unlikely(!is_cpu_allowed(p, cpu))) {\n\t\tcpu = select_fallback_rq(task_cpu(p), p);\n"
     "\t\twb_rule = WB_SELECT_FALLBACK_RQ;\n\t}\n\n\tif (wb)\n\t\twb_decision_end(p, wb_rule, cpu);\n"
     "\treturn cpu;"),
    ("ttwu_runnable", "\t\tif (READ_ONCE(p->on_rq) && ttwu_runnable(p, wake_flags))\n\t\t\tbreak;",
     "\t\tif (READ_ONCE(p->on_rq) && ttwu_runnable(p, wake_flags)) {\n"
     "\t\t\tint wb_cpu = task_cpu(p);\n\n"
     "\t\t\tif (wb_decision_begin(p, wb_cpu, wake_flags))\n"
     "\t\t\t\twb_decision_end(p, WB_TTWU_RUNNABLE, wb_cpu);\n\t\t\tbreak;\n\t\t}"),
    ("ttwu_queue_wakelist", "\t\tif (smp_load_acquire(&p->on_cpu) &&\n"
     "\t\t    ttwu_queue_wakelist(p, task_cpu(p), wake_flags))\n\t\t\tbreak;",
     "\t\tif (smp_load_acquire(&p->on_cpu)) {\n"
     "\t\t\tbool wb = wb_decision_begin(p, task_cpu(p), wake_flags);\n\n"
     "\t\t\tif (ttwu_queue_wakelist(p, task_cpu(p), wake_flags)) {\n\t\t\t\tif (wb)\n"
     "\t\t\t\t\twb_decision_end(p, WB_TTWU_QUEUE_WAKELIST, task_cpu(p));\n"
     "\t\t\t\tbreak;\n\t\t\t}\n\t\t}"),
]


def instrument_fair(text):
    for where, old, new in FAIR_EDITS:
        text = sub(text, old, new, f"fair.c {where}")
    for where, pattern, repl, anchor in FAIR_PATTERNS:
        text = resub(text, pattern, repl, f"fair.c {where}", anchor is None or anchor in text)
    return text + FAIR_TAIL


def instrument_core(text):
    for where, old, new in CORE_EDITS:
        text = sub(text, old, new, f"core.c {where}")
    return text


def file_diff(name, old, new):
    """A `diff --git` section for kernel/sched/<name> (old None: a new file)."""
    path = f"kernel/sched/{name}"
    a = [] if old is None else old.splitlines(keepends=True)
    lines = difflib.unified_diff(a, new.splitlines(keepends=True),
                                 "/dev/null" if old is None else f"a/{path}", f"b/{path}", n=3)
    head = f"diff --git a/{path} b/{path}\n" + ("new file mode 100644\n" if old is None else "")
    return head + "".join(lines)


def series_patch(header, fair, core, headers):
    """The patch text: `header`, then the diffs of fair.c, core.c and the new headers."""
    parts = [file_diff("core.c", core, instrument_core(core)),
             file_diff("fair.c", fair, instrument_fair(fair))]
    parts += [file_diff(name, None, headers[name]) for name in NEW_FILES]
    return header + "\n" + "".join(parts)
