/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wakebench lab only: one line per wakeup of a fair-class task, the inputs its placement read and
 * the rule and CPU it returned (wb_decision.h). wakebench's parser is
 * common/schema/wake_decision.cpp; every field is key=value, CPU sets are lists ("0,2-3").
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM wakebench

#if !defined(_WB_DECISION_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _WB_DECISION_TRACE_H

#include <linux/tracepoint.h>
#include "wb_decision.h"

#define WB_RULE_NAMES							\
	{ WB_RULE_NONE, "none" },					\
	{ WB_TTWU_RUNNABLE, "ttwu_runnable" },				\
	{ WB_TTWU_QUEUE_WAKELIST, "ttwu_queue_wakelist" },		\
	{ WB_NR_CPUS_ALLOWED_1, "nr_cpus_allowed_1" },			\
	{ WB_WF_CURRENT_CPU, "wf_current_cpu" },			\
	{ WB_FEEC, "find_energy_efficient_cpu" },			\
	{ WB_HOOK_BEFORE_DOMAIN_WALK, "hook_before_domain_walk" },	\
	{ WB_HOOK_AFTER_WAKE_AFFINE, "hook_after_wake_affine" },	\
	{ WB_SLOW_PATH, "sched_balance_find_dst_cpu" },			\
	{ WB_SIS_TARGET, "sis_target" },				\
	{ WB_SIS_PREV, "sis_prev" },					\
	{ WB_SIS_KTHREAD, "sis_kthread" },				\
	{ WB_SIS_RECENT, "sis_recent_used_cpu" },			\
	{ WB_SIS_CAPACITY, "sis_select_idle_capacity" },		\
	{ WB_SIS_NO_LLC, "sis_no_sd_llc" },				\
	{ WB_SIS_SMT, "sis_select_idle_smt" },				\
	{ WB_HOOK_SYNC_CORE, "hook_select_idle_sync_core" },		\
	{ WB_SIS_IDLE_CPU, "sis_select_idle_cpu" },			\
	{ WB_SIS_PREV_AFF, "sis_prev_aff" },				\
	{ WB_SIS_RECENT_FALLBACK, "sis_recent_fallback" },		\
	{ WB_SIS_TARGET_FALLBACK, "sis_target_fallback" },		\
	{ WB_SELECT_FALLBACK_RQ, "select_fallback_rq" }

TRACE_EVENT(sched_wake_decision,

	TP_PROTO(struct task_struct *p, const struct wb_decision *d, int cpu),

	TP_ARGS(p, d, cpu),

	TP_STRUCT__entry(
		__array(char, comm, TASK_COMM_LEN)	/* the wakee's: for filters, not printed */
		__field(pid_t, pid)
		__field(int, waker_cpu)
		__field(int, prev)
		__field(int, wake_flags)
		__field(unsigned int, waker_flips)
		__field(unsigned int, wakee_flips)
		__field(bool, last_wakee)
		__field(bool, wakee_last_wakee)
		__field(bool, on_rq)
		__field(bool, on_cpu)
		__field(bool, kthread)
		__field(bool, in_task)
		__field(int, nr_idle_scan)
		__field(int, prev_nr_idle_scan)
		__field(int, recent_used_cpu)
		__field(bool, has_idle_cores)
		__field(bool, prev_has_idle_cores)
		__field(unsigned int, waker_nr_running)
		__field(unsigned int, waker_delayed)
		__field(unsigned int, prev_nr_running)
		__field(bool, wake_wide)
		__field(bool, want_affine)
		__field(int, affine)
		__field(int, affine_cpu)
		__field(int, rule)
		__field(int, cpu)
		__field(bool, loads)
		__field(bool, mark)
		__field_struct(struct wb_loads, l)
		__dynamic_array(unsigned long, allowed, BITS_TO_LONGS(nr_cpu_ids))
		__dynamic_array(unsigned long, idle, BITS_TO_LONGS(nr_cpu_ids))
	),

	TP_fast_assign(
		memcpy(__entry->comm, p->comm, TASK_COMM_LEN);
		__entry->pid = p->pid;
		__entry->waker_cpu = smp_processor_id();
		__entry->prev = d->prev;
		__entry->wake_flags = d->wake_flags;
		__entry->waker_flips = d->waker_flips;
		__entry->wakee_flips = d->wakee_flips;
		__entry->last_wakee = d->last_wakee;
		__entry->wakee_last_wakee = d->wakee_last_wakee;
		__entry->on_rq = d->on_rq;
		__entry->on_cpu = d->on_cpu;
		__entry->kthread = d->kthread;
		__entry->in_task = d->in_task;
		__entry->nr_idle_scan = d->nr_idle_scan;
		__entry->prev_nr_idle_scan = d->prev_nr_idle_scan;
		__entry->recent_used_cpu = d->recent_used_cpu;
		__entry->has_idle_cores = d->has_idle_cores;
		__entry->prev_has_idle_cores = d->prev_has_idle_cores;
		__entry->waker_nr_running = d->waker_nr_running;
		__entry->waker_delayed = d->waker_delayed;
		__entry->prev_nr_running = d->prev_nr_running;
		__entry->wake_wide = d->wake_wide;
		__entry->want_affine = d->want_affine;
		__entry->affine = d->affine;
		__entry->affine_cpu = d->affine_cpu;
		__entry->rule = d->rule;
		__entry->cpu = cpu;
		__entry->loads = d->loads;
		__entry->mark = d->mark;
		__entry->l = d->l;
		memcpy(__get_dynamic_array(allowed), cpumask_bits(p->cpus_ptr),
		       BITS_TO_LONGS(nr_cpu_ids) * sizeof(unsigned long));
		memcpy(__get_dynamic_array(idle), cpumask_bits(&d->idle),
		       BITS_TO_LONGS(nr_cpu_ids) * sizeof(unsigned long));
	),

	TP_printk("pid=%d waker_cpu=%d prev=%d wake_flags=0x%x waker_flips=%u wakee_flips=%u "
		  "last_wakee=%d wakee_last_wakee=%d on_rq=%d on_cpu=%d kthread=%d in_task=%d allowed=%*pbl "
		  "nr_idle_scan=%d prev_nr_idle_scan=%d recent_used_cpu=%d has_idle_cores=%d "
		  "prev_has_idle_cores=%d waker_nr_running=%u waker_delayed=%u prev_nr_running=%u "
		  "loads=%d waker_cpu_load=%lu prev_cpu_load=%lu waker_h_load=%lu wakee_h_load=%lu "
		  "waker_capacity=%lu prev_capacity=%lu idle=%*pbl wake_wide=%d want_affine=%d affine=%s affine_cpu=%d rule=%s cpu=%d mark=%d",
		  __entry->pid, __entry->waker_cpu, __entry->prev, __entry->wake_flags,
		  __entry->waker_flips, __entry->wakee_flips, __entry->last_wakee,
		  __entry->wakee_last_wakee, __entry->on_rq,
		  __entry->on_cpu, __entry->kthread, __entry->in_task,
		  nr_cpu_ids, (unsigned long *)__get_dynamic_array(allowed),
		  __entry->nr_idle_scan, __entry->prev_nr_idle_scan, __entry->recent_used_cpu,
		  __entry->has_idle_cores, __entry->prev_has_idle_cores, __entry->waker_nr_running,
		  __entry->waker_delayed, __entry->prev_nr_running, __entry->loads,
		  __entry->l.waker_cpu, __entry->l.prev_cpu, __entry->l.waker_h, __entry->l.wakee_h,
		  __entry->l.waker_capacity, __entry->l.prev_capacity,
		  nr_cpu_ids, (unsigned long *)__get_dynamic_array(idle),
		  __entry->wake_wide, __entry->want_affine,
		  __print_symbolic(__entry->affine, { WB_WA_NONE, "none" },
				   { WB_WA_IDLE, "WA_IDLE" }, { WB_WA_WEIGHT, "WA_WEIGHT" }),
		  __entry->affine_cpu, __print_symbolic(__entry->rule, WB_RULE_NAMES), __entry->cpu,
		  __entry->mark)
);

#endif /* _WB_DECISION_TRACE_H */

/* This header lives in kernel/sched, not include/trace/events. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH ../../kernel/sched
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE wb_decision_trace
#include <trace/define_trace.h>
