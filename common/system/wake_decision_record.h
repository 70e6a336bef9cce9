/* One wakeup decision as a BPF recorder (wake_decision.bpf.c) hands it to user space
 * (common/system/decision_recorder.cpp): the inputs select_task_rq_fair() reads, taken at its
 * entry (fentry) or at sched_waking (tp_btf), and the CPU it returned, at its exit (fentry) or
 * where the wake set it (tp_btf). Shared by the BPF object and the C++ reader: C,
 * fixed widths, no padding the two could lay out differently. */
#ifndef WB_WAKE_DECISION_RECORD_H
#define WB_WAKE_DECISION_RECORD_H

#ifdef __bpf__
typedef __u64 wb_u64;
typedef __u32 wb_u32;
typedef __s32 wb_s32;
#else
#include <stdint.h>
typedef uint64_t wb_u64;
typedef uint32_t wb_u32;
typedef int32_t wb_s32;
#endif

/* CPUs a record's masks hold: machines with more CPUs get no recorder (one line says so). */
#define WB_DECISION_MAX_CPUS 1024
#define WB_DECISION_MASK_WORDS (WB_DECISION_MAX_CPUS / 64)

/* Bits of wb_decision_record.flags. */
#define WB_DR_LAST_WAKEE (1u << 0)       /* the waker's last_wakee was the wakee */
#define WB_DR_WAKEE_LAST_WAKEE (1u << 1) /* the wakee's last_wakee was the waker */
#define WB_DR_ON_RQ (1u << 2)
#define WB_DR_ON_CPU (1u << 3)
#define WB_DR_KTHREAD (1u << 4)        /* the waker is a per-CPU kthread */
#define WB_DR_HAS_IDLE_CORES (1u << 5) /* the waker's LLC */
#define WB_DR_PREV_HAS_IDLE_CORES (1u << 6)
#define WB_DR_DELAYED_KNOWN (1u << 7) /* waker_delayed was read (a field this kernel has) */
#define WB_DR_IDLE_MOVED (1u << 8)    /* the idle CPUs at exit were not those at entry */
#define WB_DR_LOADS_KNOWN (1u << 9)   /* the loads below were read (tasks of the root group) */
#define WB_DR_AT_WAKING (1u << 10)    /* tp_btf: read at sched_waking; no wake flags but WF_TTWU */
#define WB_DR_WAKER_OURS (1u << 11)   /* tp_btf: the waker is a case task (not the run itself) */
#define WB_DR_CPU_AT_MIGRATE (1u << 12) /* tp_btf: the CPU and idle CPUs at sched_migrate_task */

struct wb_decision_record {
  wb_u64 ts_ns; /* bpf_ktime_get_ns() at entry or sched_waking: the tracefs "mono" clock */
  wb_s32 pid, waker_pid, waker_cpu, prev, cpu;
  wb_u32 wake_flags, flags;
  wb_u32 waker_flips, wakee_flips;
  wb_s32 recent_used_cpu, nr_idle_scan, prev_nr_idle_scan;
  wb_u32 waker_nr_running, waker_delayed, prev_nr_running;
  wb_u32 waker_capacity; /* capacity_of(): rq->cpu_capacity */
  /* wake_affine_weight()'s loads: cpu_load() (rq->cfs.avg.load_avg) of the waker's and prev's
   * CPUs, task_h_load() of the waker and the wakee. */
  wb_u64 waker_cpu_load, prev_cpu_load, waker_h_load, wakee_h_load;
  wb_u32 prev_capacity, pad;
  char waker_comm[16];
  /* The wakee's allowed CPUs in words 0..n-1, the idle CPUs at entry in n..2n-1, n = the
   * recorder's mask_words; only those 2n words are sent. */
  wb_u64 masks[2 * WB_DECISION_MASK_WORDS];
};

#endif
