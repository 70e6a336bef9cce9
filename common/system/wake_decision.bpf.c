// SPDX-License-Identifier: GPL-2.0
/* The decision recorders of `wakebench run --trace-decisions` on a stock kernel
 * (docs/policy-model.md#bpf-records), for the wakeups of the run's own tasks (named like it, and
 * it or its descendants). Two program sets in one object; user space loads one of them:
 * - fentry and fexit of select_task_rq_fair() (WF_TTWU): at entry the inputs the selection reads
 *   (the lab kernels' sched_wake_decision event reads the same, in the kernel) and its wake flags;
 *   at exit the CPU it chose, and the idle CPUs read again (a change between the two is flagged);
 * - where fentry is refused, tp_btf on sched_waking (try_to_wake_up(), before select_task_rq()):
 *   the same inputs but the wake flags, kept per wakee until the CPU it was given shows at
 *   sched_migrate_task (set_task_cpu() of the wake, where it moved; the idle CPUs read again
 *   there) or at sched_wakeup (task_cpu(); the idle CPUs read again there when it did not move).
 * The rule is not observable at either. Kernel types are declared below with only the fields read,
 * and relocated through the running kernel's BTF (CO-RE): one object for 6.12 and later. Kernel
 * memory is read by direct loads through typed pointers, never bpf_probe_read_kernel(), which
 * kernel lockdown (confidentiality) withholds. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "wake_decision_record.h"

#define PF_KTHREAD 0x00200000
#define WF_TTWU 0x08

/* Not relocated: the bits are the whole struct in every kernel, as many as NR_CPUS needs (a
 * relocation would hold the words read to the size of the array declared here). */
struct cpumask {
  unsigned long bits[WB_DECISION_MASK_WORDS];
};
struct sched_avg {
  unsigned long load_avg;
} __attribute__((preserve_access_index));
struct cfs_rq;
struct sched_entity {
  struct sched_avg avg;
  struct sched_entity *parent; /* CONFIG_FAIR_GROUP_SCHED */
  struct cfs_rq *cfs_rq;       /* CONFIG_FAIR_GROUP_SCHED */
} __attribute__((preserve_access_index));
struct thread_info {
  unsigned int cpu; /* task_cpu() where the arch keeps it here (x86, arm64, ...) */
} __attribute__((preserve_access_index));
struct task_struct {
  struct thread_info thread_info;
  int pid, tgid;
  struct task_struct *real_parent;
  struct sched_entity se;
  unsigned int flags;
  int on_cpu, on_rq;
  int recent_used_cpu, wake_cpu, nr_cpus_allowed;
  unsigned int wakee_flips;
  struct task_struct *last_wakee;
  const struct cpumask *cpus_ptr;
  char comm[16];
} __attribute__((preserve_access_index));
struct task_struct___cpu { /* arches that keep task_cpu() in the task */
  unsigned int cpu;
} __attribute__((preserve_access_index));
struct rq;
struct cfs_rq {
  struct rq *rq; /* CONFIG_FAIR_GROUP_SCHED */
  unsigned int h_nr_queued, h_nr_runnable, idle_h_nr_running, h_nr_idle;
  struct sched_avg avg;
  unsigned long h_load;              /* CONFIG_FAIR_GROUP_SCHED */
  unsigned long last_h_load_update; /* CONFIG_FAIR_GROUP_SCHED: jiffies */
} __attribute__((preserve_access_index));
struct cfs_rq___6_12_early { /* 6.12 before the h_nr_queued backport */
  unsigned int h_nr_delayed;
} __attribute__((preserve_access_index));
struct sched_domain_shared {
  int has_idle_cores, nr_idle_scan;
} __attribute__((preserve_access_index));
struct sched_domain {
  struct sched_domain *parent;
  int flags;
  struct sched_domain_shared *shared;
} __attribute__((preserve_access_index));
struct rq {
  unsigned int nr_running, ttwu_pending;
  unsigned long cpu_capacity;
  struct task_struct *curr, *idle;
  struct cfs_rq cfs;
  struct sched_domain *sd;
  int cpu;
} __attribute__((preserve_access_index));

/* SD_SHARE_LLC (include/linux/sched/sd_flags.h: bit 9 since SD_CLUSTER, 5.16); its enum is
 * anonymous, which CO-RE cannot relocate by name. */
#define SD_SHARE_LLC (1 << 9)

/* A typed, read-only pointer from an address (kfunc, 6.2+). */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

char LICENSE[] SEC("license") = "GPL";

const volatile char comm[16] = {};
const volatile int run_tgid = 0; /* the run's process: its case tasks are it or its descendants */
const volatile __u32 nr_cpus = 1;    /* possible CPUs: the masks' and loops' bound */
const volatile __u32 mask_words = 1; /* (nr_cpus + 63) / 64 */
__u64 online[WB_DECISION_MASK_WORDS] = {};
__u64 dropped = 0, moved = 0, unpaired = 0;
/* Each CPU's runqueue (struct rq *), noted by note_rq before the recording starts: the kernel's
 * per-CPU `runqueues` is no ksym where kallsyms holds no data symbols (CONFIG_KALLSYMS_ALL off, as
 * on this VM's vendor kernel). */
__u64 rq_addr[WB_DECISION_MAX_CPUS] = {};

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 24);
} records SEC(".maps");

/* tp_btf: each wakee's record from sched_waking until its sched_wakeup. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 8192);
  __type(key, __s32);
  __type(value, struct wb_decision_record);
} wakes SEC(".maps");

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

/* cpu_rq(cpu), or null where it was not noted. */
static struct rq *rq_of(__u32 cpu) {
  if (cpu >= WB_DECISION_MAX_CPUS || !rq_addr[cpu]) return 0;
  return bpf_rdonly_cast((void *)rq_addr[cpu], bpf_core_type_id_kernel(struct rq));
}

/* A context switch on this CPU: the switched-out task's cfs_rq names its CPU's runqueue (every
 * task's, the idle task's too: set_task_rq()). Attached only while user space makes each CPU
 * switch; its check of rq->cpu keeps a wrong address out. */
SEC("tp_btf/sched_switch")
int BPF_PROG(note_rq, bool preempt, struct task_struct *prev) {
  __u32 cpu = bpf_get_smp_processor_id();
  if (cpu >= WB_DECISION_MAX_CPUS || rq_addr[cpu] || !bpf_core_field_exists(prev->se.cfs_rq))
    return 0;
  struct cfs_rq *cfs = prev->se.cfs_rq;
  struct rq *rq = cfs ? cfs->rq : 0;
  if (rq && rq->cpu == cpu) rq_addr[cpu] = (__u64)rq;
  return 0;
}

static unsigned int delayed(struct rq *rq, bool *known) {
  *known = true;
  if (bpf_core_field_exists(rq->cfs.h_nr_runnable))
    return rq->cfs.h_nr_queued - rq->cfs.h_nr_runnable;
  struct cfs_rq___6_12_early *early = (void *)&rq->cfs;
  if (bpf_core_field_exists(early->h_nr_delayed)) return early->h_nr_delayed;
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
  struct rq *rq = rq_of(cpu);
  if (!rq) return false;
  if (rq->curr == rq->idle && !rq->nr_running && !rq->ttwu_pending) return true;
  return sched_idle(rq);
}

static bool only_wakee(__u32 cpu) {
  struct rq *rq = rq_of(cpu);
  return rq && rq->curr == rq->idle && rq->nr_running <= 1;
}

/* The online CPUs idle now; `wakee_at` (a CPU, or -1) counts idle where the wakee, just queued,
 * is all it holds and the idle task still runs. */
static void idle_mask(__u64 *mask, int wakee_at) {
  for (__u32 cpu = 0; cpu < WB_DECISION_MAX_CPUS && cpu < nr_cpus; cpu++) {
    __u32 w = cpu / 64;
    if (w >= WB_DECISION_MASK_WORDS) break;
    if (!((online[w] >> (cpu % 64)) & 1)) continue;
    if (cpu == (__u32)wakee_at ? only_wakee(cpu) : cpu_idle(cpu)) mask[w] |= 1ull << (cpu % 64);
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

/* The hints of sd_llc_shared[cpu]: the shared state of the highest domain of cpu's with
 * SD_SHARE_LLC (update_top_cache_domain()). */
static void llc_hints(int cpu, int *nr_idle_scan, __u32 *flags, __u32 bit) {
  struct rq *rq = rq_of(cpu);
  struct sched_domain *sd = rq ? rq->sd : 0;
  struct sched_domain_shared *sds = 0;
  for (int level = 0; level < 8 && sd && (sd->flags & SD_SHARE_LLC); level++) {
    sds = sd->shared;
    sd = sd->parent;
  }
  *nr_idle_scan = sds ? sds->nr_idle_scan : -1;
  if (sds && sds->has_idle_cores) *flags |= bit;
}

/* The inputs the selection reads, as they are now: the wakee `p` and its `prev` (the CPU the
 * selection starts from), the waker (this task) on this CPU. The record's wake flags and CPU are
 * the caller's to fill. */
static void read_inputs(struct wb_decision_record *r, struct task_struct *p, int prev) {
  struct task_struct *waker = bpf_get_current_task_btf();
  __u32 cpu = bpf_get_smp_processor_id();
  __builtin_memset(r, 0, sizeof(*r));
  r->ts_ns = bpf_ktime_get_ns();
  r->pid = p->pid;
  r->waker_pid = waker->pid;
  for (int i = 0; i < 16; i++) r->waker_comm[i] = waker->comm[i];
  r->waker_cpu = cpu;
  r->prev = prev;
  r->cpu = -1;
  r->waker_flips = waker->wakee_flips;
  r->wakee_flips = p->wakee_flips;
  if (waker->last_wakee == p) r->flags |= WB_DR_LAST_WAKEE;
  if (p->last_wakee == waker) r->flags |= WB_DR_WAKEE_LAST_WAKEE;
  if (p->on_rq) r->flags |= WB_DR_ON_RQ;
  if (p->on_cpu) r->flags |= WB_DR_ON_CPU;
  if ((waker->flags & PF_KTHREAD) && waker->nr_cpus_allowed == 1) r->flags |= WB_DR_KTHREAD;
  r->recent_used_cpu = p->recent_used_cpu;
  struct rq *rq = rq_of(cpu);
  struct rq *prq = rq_of(prev);
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
  const struct cpumask *allowed = p->cpus_ptr;
#pragma unroll
  for (int w = 0; w < WB_DECISION_MASK_WORDS; w++)
    if (w < mask_words) r->masks[w] = allowed->bits[w]; /* mask_words is known at load */
  idle_mask(&r->masks[mask_words <= WB_DECISION_MASK_WORDS ? mask_words : 0], -1);
}

/* The record to the ring: its masks cut to the words in use. */
static void send(struct wb_decision_record *r) {
  __u32 n = mask_words <= WB_DECISION_MASK_WORDS ? mask_words : 1;
  __u64 size = sizeof(*r) - sizeof(r->masks) + 2 * n * sizeof(__u64);
  if (size > sizeof(*r)) return;
  if (bpf_ringbuf_output(&records, r, size, 0)) __sync_fetch_and_add(&dropped, 1);
}

/* The idle CPUs read again, held to those of the record, but for `skip` (the waker's CPU, busy
 * with the waker while it selects). `wakee_at`: the CPU the wakee is already queued on (idle
 * when only it is there), -1 when it is not queued yet. */
static void idle_again(struct wb_decision_record *r, int skip, int wakee_at) {
  __u64 again[WB_DECISION_MASK_WORDS] = {};
  idle_mask(again, wakee_at);
  __u32 n = mask_words <= WB_DECISION_MASK_WORDS ? mask_words : 1;
  for (__u32 w = 0; w < WB_DECISION_MASK_WORDS && w < n; w++) {
    __u64 mask = ~0ull;
    if (skip >= 0 && (__u32)skip / 64 == w) mask &= ~(1ull << (skip % 64));
    if ((again[w] & mask) != (r->masks[n + w] & mask)) r->flags |= WB_DR_IDLE_MOVED;
  }
  if (r->flags & WB_DR_IDLE_MOVED) __sync_fetch_and_add(&moved, 1);
}

SEC("fentry/select_task_rq_fair")
int BPF_PROG(decision_entry, struct task_struct *p, int prev, int wake_flags) {
  if (!(wake_flags & WF_TTWU) || !ours(p)) return 0;
  __u32 zero = 0;
  struct wb_decision_record *r = bpf_map_lookup_elem(&pending, &zero);
  if (!r) return 0;
  read_inputs(r, p, prev);
  r->wake_flags = wake_flags;
  return 0;
}

SEC("fexit/select_task_rq_fair")
int BPF_PROG(decision_exit, struct task_struct *p, int prev, int wake_flags, int ret) {
  if (!(wake_flags & WF_TTWU) || !ours(p)) return 0;
  __u32 zero = 0;
  struct wb_decision_record *r = bpf_map_lookup_elem(&pending, &zero);
  if (!r || r->pid != p->pid || r->cpu != -1) return 0;
  r->cpu = ret;
  idle_again(r, -1, -1);
  send(r);
  return 0;
}

/* task_cpu(). */
static int task_cpu(struct task_struct *p) {
  if (bpf_core_field_exists(p->thread_info.cpu)) return p->thread_info.cpu;
  struct task_struct___cpu *q = (void *)p;
  return q->cpu;
}

/* sched_waking: try_to_wake_up() has taken p->pi_lock and will wake p (its state matched); the
 * selection, if any (not for a wakee still queued, or one queued on its CPU still switching out),
 * follows under the same lock. The wake flags are not passed here: user space adds them. */
SEC("tp_btf/sched_waking")
int BPF_PROG(waking, struct task_struct *p) {
  if (!ours(p)) return 0;
  __u32 zero = 0;
  struct wb_decision_record *r = bpf_map_lookup_elem(&pending, &zero);
  if (!r) return 0;
  read_inputs(r, p, p->wake_cpu);
  r->wake_flags = WF_TTWU;
  r->flags |= WB_DR_AT_WAKING;
  struct task_struct *waker = bpf_get_current_task_btf();
  if (ours(waker) && waker->tgid != run_tgid) r->flags |= WB_DR_WAKER_OURS;
  __s32 pid = p->pid;
  if (bpf_map_update_elem(&wakes, &pid, r, BPF_NOEXIST)) {
    __sync_fetch_and_add(&unpaired, 1); /* a wake of p never seen to end: replaced */
    bpf_map_update_elem(&wakes, &pid, r, BPF_ANY);
  }
  return 0;
}

/* set_task_cpu() of a pending wake: the CPU the selection returned, right after it. */
SEC("tp_btf/sched_migrate_task")
int BPF_PROG(wake_moved, struct task_struct *p, int dest_cpu) {
  __s32 pid = p->pid;
  struct wb_decision_record *r = bpf_map_lookup_elem(&wakes, &pid);
  if (!r || r->cpu != -1) return 0;
  r->cpu = dest_cpu;
  idle_again(r, r->waker_cpu, -1);
  r->flags |= WB_DR_CPU_AT_MIGRATE;
  return 0;
}

/* The wake done: p queued on its CPU (on the waker's CPU at once, or later on another by IPI). */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(woken, struct task_struct *p) {
  __s32 pid = p->pid;
  struct wb_decision_record *r = bpf_map_lookup_elem(&wakes, &pid);
  if (!r) return 0;
  int cpu = task_cpu(p);
  if (r->cpu == -1 && !(r->flags & WB_DR_ON_RQ)) idle_again(r, r->waker_cpu, cpu);
  r->cpu = cpu;
  send(r);
  bpf_map_delete_elem(&wakes, &pid);
  return 0;
}
