/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wakebench lab only (runners/lab/patches/trace/): the inputs one wakeup's placement read and the
 * rule that returned it, for the sched_wake_decision event (wb_decision_trace.h). The notes below
 * write a per-CPU scratch only while the event is enabled: with it off, each is a static-branch
 * nop and no decision changes. select_task_rq() and try_to_wake_up() run with p->pi_lock held and
 * interrupts off, so one scratch per CPU is never shared by two wakeups at once.
 */
#ifndef _KERNEL_SCHED_WB_DECISION_H
#define _KERNEL_SCHED_WB_DECISION_H

#include <linux/cpumask.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/tracepoint-defs.h>

/* The rules, named after the kernel's branches (docs/policy-model.md#rules holds the same list). */
enum wb_rule {
	WB_RULE_NONE,
	WB_TTWU_RUNNABLE,
	WB_TTWU_QUEUE_WAKELIST,
	WB_NR_CPUS_ALLOWED_1,
	WB_WF_CURRENT_CPU,
	WB_FEEC,
	WB_HOOK_BEFORE_DOMAIN_WALK,
	WB_HOOK_AFTER_WAKE_AFFINE,
	WB_SLOW_PATH,
	WB_SIS_TARGET,
	WB_SIS_PREV,
	WB_SIS_KTHREAD,
	WB_SIS_RECENT,
	WB_SIS_CAPACITY,
	WB_SIS_NO_LLC,
	WB_SIS_SMT,
	WB_HOOK_SYNC_CORE,
	WB_SIS_IDLE_CPU,
	WB_SIS_PREV_AFF,
	WB_SIS_RECENT_FALLBACK,
	WB_SIS_TARGET_FALLBACK,
	WB_SELECT_FALLBACK_RQ,
};

/* Which wake_affine() test gave its result. */
enum wb_affine { WB_WA_NONE, WB_WA_IDLE, WB_WA_WEIGHT };

/* wake_affine_weight()'s reads: cpu_load() of the waker's and prev's CPUs, task_h_load() of the
 * waker and the wakee, capacity_of() of both CPUs. */
struct wb_loads {
	unsigned long waker_cpu, prev_cpu, waker_h, wakee_h, waker_capacity, prev_capacity;
};

struct wb_decision {
	int prev, wake_flags;
	unsigned int waker_flips, wakee_flips;
	bool last_wakee, wakee_last_wakee, on_rq, on_cpu, kthread, in_task;
	bool has_idle_cores, prev_has_idle_cores;	/* of the waker's and of prev's LLC */
	int nr_idle_scan, prev_nr_idle_scan;		/* -1: no sd_llc_shared */
	int recent_used_cpu;
	unsigned int waker_nr_running, waker_delayed, prev_nr_running;
	bool wake_wide, want_affine;
	int affine, affine_cpu, rule;
	bool loads;			/* wake_affine_weight() ran: l is what it read, 0 if not read */
	bool mark;			/* wb_mark(): a lab mutation's changed branch decided */
	struct wb_loads l;
	struct cpumask idle;	/* available_idle_cpu() or sched_idle_cpu(), every online CPU */
};

DECLARE_PER_CPU(struct wb_decision, wb_decision);
DECLARE_TRACEPOINT(sched_wake_decision);

/* build-kernel.sh --compare-trace compiles fair.c with the notes compiled out, to show that the
 * patch's edits leave the placement code as it was. */
#ifdef WB_DECISION_NOTES_OFF
#define wb_tracing() false
#else
#define wb_tracing() tracepoint_enabled(sched_wake_decision)
#endif

/* fair.c: fills this CPU's scratch; false (nothing recorded) unless a fair-class TTWU wakeup. */
bool __wb_decision_begin(struct task_struct *p, int prev, int wake_flags);
/* fair.c: emits the event from this CPU's scratch, `cpu` the CPU chosen. */
void __wb_decision_end(struct task_struct *p, int cpu);

static __always_inline bool wb_decision_begin(struct task_struct *p, int prev, int wake_flags)
{
	return wb_tracing() && __wb_decision_begin(p, prev, wake_flags);
}

static __always_inline void wb_decision_end(struct task_struct *p, int rule, int cpu)
{
	if (rule != WB_RULE_NONE)
		this_cpu_write(wb_decision.rule, rule);
	__wb_decision_end(p, cpu);
}

/* Notes: each returns its argument, so that it can wrap a return value. */
static __always_inline int wb_ret(int rule, int cpu)
{
	if (wb_tracing())
		this_cpu_write(wb_decision.rule, rule);
	return cpu;
}

static __always_inline int wb_note_wide(int wide)
{
	if (wb_tracing())
		this_cpu_write(wb_decision.wake_wide, wide);
	return wide;
}

static __always_inline int wb_note_want_affine(int want_affine)
{
	if (wb_tracing())
		this_cpu_write(wb_decision.want_affine, want_affine);
	return want_affine;
}

/* wake_affine(): the first test that gave a CPU, and what wake_affine() returned. */
static __always_inline void wb_note_affine_test(int test, int target)
{
	if (wb_tracing() && target != nr_cpumask_bits &&
	    this_cpu_read(wb_decision.affine) == WB_WA_NONE)
		this_cpu_write(wb_decision.affine, test);
}

static __always_inline int wb_affine_ret(int cpu)
{
	if (wb_tracing())
		this_cpu_write(wb_decision.affine_cpu, cpu);
	return cpu;
}

/* wake_affine_weight(): the loads as it reads them. Macros, since their arguments are fair.c's
 * statics (cpu_load(), task_h_load(), capacity_of()), evaluated only while the event is on. */
#define wb_note_loads(this_load, this_cpu, prev_cpu)				\
	do {									\
		if (wb_tracing()) {						\
			struct wb_decision *__d = this_cpu_ptr(&wb_decision);	\
										\
			__d->loads = true;					\
			__d->l.waker_cpu = (this_load);				\
			__d->l.waker_capacity = capacity_of(this_cpu);		\
			__d->l.prev_capacity = capacity_of(prev_cpu);		\
		}								\
	} while (0)

#define wb_note_load(field, value)						\
	do {									\
		if (wb_tracing())						\
			this_cpu_write(wb_decision.l.field, (value));		\
	} while (0)

/* A lab mutation's own marker: its changed branch decided this wakeup (patches/mutations/; the
 * event prints mark=1). Mainline and the policies never call it. */
static __always_inline void wb_mark(void)
{
	if (wb_tracing())
		this_cpu_write(wb_decision.mark, true);
}

/* record_wakee(): the waker's flips after the decay, before this wake's increment. */
static __always_inline void wb_note_flips(struct task_struct *p)
{
	if (wb_tracing()) {
		this_cpu_write(wb_decision.waker_flips, current->wakee_flips);
		this_cpu_write(wb_decision.last_wakee, current->last_wakee == p);
	}
}

#endif /* _KERNEL_SCHED_WB_DECISION_H */
