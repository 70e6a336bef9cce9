// SPDX-License-Identifier: GPL-2.0
/* The decision recorder of `wakebench run --trace-decisions` on a stock kernel
 * (docs/policy-model.md#decision-records): fentry and fexit of select_task_rq_fair(), for wakeups
 * (WF_TTWU) of the run's own tasks (named like it, and it or its descendants). At entry: the
 * inputs the selection reads (the lab kernels' sched_wake_decision event reads the same, in the kernel); at
 * exit: the CPU it chose, and the idle CPUs read again (a change between the two is flagged). The
 * rule is not observable here. Kernel types are declared below with only the fields read, and
 * relocated through the running kernel's BTF (CO-RE): one object for 6.12 and later. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "wake_decision_record.h"

#define PF_KTHREAD 0x00200000
#define WF_TTWU 0x08

struct cpumask { unsigned long bits[1]; } __attribute__((preserve_access_index));
struct sched_avg {
  unsigned long load_avg;
} __attribute__((preserve_access_index));
struct cfs_rq;
struct sched_entity {
  struct sched_avg avg;
  struct sched_entity *parent; /* CONFIG_FAIR_GROUP_SCHED */
  struct cfs_rq *cfs_rq;       /* CONFIG_FAIR_GROUP_SCHED */
} __attribute__((preserve_access_index));
struct task_struct {
  int pid, tgid;
  struct task_struct *real_parent;
  struct sched_entity se;
  unsigned int flags;
  int on_cpu, on_rq;
  int recent_used_cpu, nr_cpus_allowed;
  unsigned int wakee_flips;
  struct task_struct *last_wakee;
  const struct cpumask *cpus_ptr;
  char comm[16];
} __attribute__((preserve_access_index));
struct cfs_rq {
  unsigned int h_nr_queued, h_nr_runnable, idle_h_nr_running, h_nr_idle;
  struct sched_avg avg;
  unsigned long h_load;              /* CONFIG_FAIR_GROUP_SCHED */
  unsigned long last_h_load_update; /* CONFIG_FAIR_GROUP_SCHED: jiffies */
} __attribute__((preserve_access_index));
struct cfs_rq___6_12_early { /* 6.12 before the h_nr_queued backport */
  unsigned int h_nr_delayed;
} __attribute__((preserve_access_index));
struct rq {
  unsigned int nr_running, ttwu_pending;
  unsigned long cpu_capacity;
  struct task_struct *curr, *idle;
  struct cfs_rq cfs;
} __attribute__((preserve_access_index));
struct sched_domain_shared {
  int has_idle_cores, nr_idle_scan;
} __attribute__((preserve_access_index));

extern struct rq runqueues __ksym;
extern struct sched_domain_shared *sd_llc_shared __ksym;

char LICENSE[] SEC("license") = "GPL";

const volatile char comm[16] = {};
const volatile int run_tgid = 0; /* the run's process: its case tasks are it or its descendants */
const volatile __u32 nr_cpus = 1;    /* possible CPUs: the masks' and loops' bound */
const volatile __u32 mask_words = 1; /* (nr_cpus + 63) / 64 */
__u64 online[WB_DECISION_MASK_WORDS] = {};
__u64 dropped = 0, moved = 0;

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 24);
} records SEC(".maps");

/* The record being built on this CPU between entry and exit (the wakeup holds p->pi_lock with
 * interrupts off: no other selection starts on this CPU in between). */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct wb_decision_record);
} pending SEC(".maps");

static bool named(struct task_struct *p) {
  for (int i = 0; i < 16; i++) {
    if (p->comm[i] != comm[i]) return false;
    if (!comm[i]) return true;
  }
  return true;
}

/* A case task: named like the run, and the run's process or within three generations below it
 * (the supervisor forks task processes; threads mode's tasks are threads of one of them): another
 * process of the same name is left out. */
static bool ours(struct task_struct *p) {
  if (!named(p)) return false;
  if (!run_tgid) return true;
  struct task_struct *t = p;
  for (int i = 0; i < 4 && t; i++) {
    if (t->tgid == run_tgid) return true;
    t = t->real_parent;
  }
  return false;
}

static unsigned int delayed(struct rq *rq, bool *known) {
  *known = true;
  if (bpf_core_field_exists(rq->cfs.h_nr_runnable))
    return rq->cfs.h_nr_queued - rq->cfs.h_nr_runnable;
  struct cfs_rq___6_12_early *early = (void *)&rq->cfs;
  if (bpf_core_field_exists(early->h_nr_delayed)) return BPF_CORE_READ(early, h_nr_delayed);
  *known = false;
  return 0;
}

/* sched_idle_cpu(): only SCHED_IDLE tasks queued. */
static bool sched_idle(struct rq *rq) {
  unsigned int idle_h;
  if (bpf_core_field_exists(rq->cfs.h_nr_idle))
    idle_h = rq->cfs.h_nr_idle;
  else
    idle_h = rq->cfs.idle_h_nr_running;
  return rq->nr_running && rq->nr_running == idle_h;
}

/* available_idle_cpu() || sched_idle_cpu(), as the lab kernels' event reads it (vcpu_is_preempted
 * is not read: false on bare metal and under TCG). */
static bool cpu_idle(__u32 cpu) {
  struct rq *rq = bpf_per_cpu_ptr(&runqueues, cpu);
  if (!rq) return false;
  if (rq->curr == rq->idle && !rq->nr_running && !rq->ttwu_pending) return true;
  return sched_idle(rq);
}

static void idle_mask(__u64 *mask) {
  for (__u32 cpu = 0; cpu < WB_DECISION_MAX_CPUS && cpu < nr_cpus; cpu++) {
    __u32 w = cpu / 64;
    if (w >= WB_DECISION_MASK_WORDS) break;
    if ((online[w] >> (cpu % 64)) & 1 && cpu_idle(cpu)) mask[w] |= 1ull << (cpu % 64);
  }
}

/* task_h_load() for a task of the root task group, as the kernel computes it (h_load refreshed
 * from the load once a jiffy); false for a task in another group (the hierarchy is not walked). */
static bool h_load(struct task_struct *t, struct rq *rq, __u64 *out) {
  __u64 load = rq->cfs.avg.load_avg, h = load;
  if (bpf_core_field_exists(t->se.parent)) {
    if (t->se.parent) return false;
    if (rq->cfs.last_h_load_update == bpf_jiffies64()) h = rq->cfs.h_load;
  }
  *out = t->se.avg.load_avg * h / (load + 1);
  return true;
}

/* wake_affine_weight()'s inputs, where both tasks are of the root group. */
static void loads(struct wb_decision_record *r, struct task_struct *p, struct task_struct *waker,
                  struct rq *rq, struct rq *prq) {
  if (!h_load(waker, rq, &r->waker_h_load) || !h_load(p, prq, &r->wakee_h_load)) return;
  r->waker_cpu_load = rq->cfs.avg.load_avg;
  r->prev_cpu_load = prq->cfs.avg.load_avg;
  r->waker_capacity = rq->cpu_capacity;
  r->prev_capacity = prq->cpu_capacity;
  r->flags |= WB_DR_LOADS_KNOWN;
}

static void llc_hints(int cpu, int *nr_idle_scan, __u32 *flags, __u32 bit) {
  struct sched_domain_shared **slot = bpf_per_cpu_ptr(&sd_llc_shared, cpu);
  struct sched_domain_shared *sds = slot ? *slot : 0;
  *nr_idle_scan = sds ? BPF_CORE_READ(sds, nr_idle_scan) : -1;
  if (sds && BPF_CORE_READ(sds, has_idle_cores)) *flags |= bit;
}

SEC("fentry/select_task_rq_fair")
int BPF_PROG(decision_entry, struct task_struct *p, int prev, int wake_flags) {
  if (!(wake_flags & WF_TTWU) || !ours(p)) return 0;
  __u32 zero = 0;
  struct wb_decision_record *r = bpf_map_lookup_elem(&pending, &zero);
  if (!r) return 0;
  struct task_struct *waker = bpf_get_current_task_btf();
  __u32 cpu = bpf_get_smp_processor_id();
  __builtin_memset(r, 0, sizeof(*r));
  r->ts_ns = bpf_ktime_get_ns();
  r->pid = p->pid;
  r->waker_pid = waker->pid;
  bpf_probe_read_kernel_str(r->waker_comm, sizeof(r->waker_comm), waker->comm);
  r->waker_cpu = cpu;
  r->prev = prev;
  r->cpu = -1;
  r->wake_flags = wake_flags;
  r->waker_flips = waker->wakee_flips;
  r->wakee_flips = p->wakee_flips;
  if (waker->last_wakee == p) r->flags |= WB_DR_LAST_WAKEE;
  if (p->last_wakee == waker) r->flags |= WB_DR_WAKEE_LAST_WAKEE;
  if (p->on_rq) r->flags |= WB_DR_ON_RQ;
  if (p->on_cpu) r->flags |= WB_DR_ON_CPU;
  if ((waker->flags & PF_KTHREAD) && waker->nr_cpus_allowed == 1) r->flags |= WB_DR_KTHREAD;
  r->recent_used_cpu = p->recent_used_cpu;
  struct rq *rq = bpf_per_cpu_ptr(&runqueues, cpu);
  struct rq *prq = bpf_per_cpu_ptr(&runqueues, prev);
  if (rq) {
    bool known;
    r->waker_nr_running = rq->nr_running;
    r->waker_delayed = delayed(rq, &known);
    if (known) r->flags |= WB_DR_DELAYED_KNOWN;
  }
  if (prq) r->prev_nr_running = prq->nr_running;
  if (rq && prq) loads(r, p, waker, rq, prq);
  llc_hints(cpu, &r->nr_idle_scan, &r->flags, WB_DR_HAS_IDLE_CORES);
  llc_hints(prev, &r->prev_nr_idle_scan, &r->flags, WB_DR_PREV_HAS_IDLE_CORES);
  for (__u32 w = 0; w < WB_DECISION_MASK_WORDS && w < mask_words; w++)
    bpf_probe_read_kernel(&r->masks[w], sizeof(__u64), &p->cpus_ptr->bits[w]);
  idle_mask(&r->masks[mask_words <= WB_DECISION_MASK_WORDS ? mask_words : 0]);
  return 0;
}

SEC("fexit/select_task_rq_fair")
int BPF_PROG(decision_exit, struct task_struct *p, int prev, int wake_flags, int ret) {
  if (!(wake_flags & WF_TTWU) || !ours(p)) return 0;
  __u32 zero = 0;
  struct wb_decision_record *r = bpf_map_lookup_elem(&pending, &zero);
  if (!r || r->pid != p->pid || r->cpu != -1) return 0;
  r->cpu = ret;
  __u64 again[WB_DECISION_MASK_WORDS] = {};
  idle_mask(again);
  __u32 n = mask_words <= WB_DECISION_MASK_WORDS ? mask_words : 1;
  for (__u32 w = 0; w < WB_DECISION_MASK_WORDS && w < n; w++)
    if (again[w] != r->masks[n + w]) r->flags |= WB_DR_IDLE_MOVED;
  if (r->flags & WB_DR_IDLE_MOVED) __sync_fetch_and_add(&moved, 1);
  __u64 size = sizeof(*r) - sizeof(r->masks) + 2 * n * sizeof(__u64);
  if (size > sizeof(*r)) return 0;
  if (bpf_ringbuf_output(&records, r, size, 0)) __sync_fetch_and_add(&dropped, 1);
  return 0;
}
