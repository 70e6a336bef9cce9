#include "common/system/decision_recorder.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "common/system/wake_decision_record.h"
#include "common/util/cpulist.h"
#ifdef WB_HAVE_BPF
#include <bpf/libbpf.h>

#include "wake_decision.skel.h"  // generated from wake_decision.bpf.c by the build
#endif

namespace wb {
namespace {

std::vector<int> mask_cpus(const wb_u64* words, int n) {
  std::vector<int> out;
  for (int w = 0; w < n; ++w)
    for (int b = 0; b < 64; ++b)
      if ((words[w] >> b) & 1) out.push_back(w * 64 + b);
  return out;
}

}  // namespace

DecisionRecord decision_of(const wb_decision_record& r, int mask_words) {
  DecisionRecord d;
  d.source = DecisionSource::kBpf;
  d.pid = r.pid;
  d.waker_cpu = r.waker_cpu;
  d.prev = r.prev;
  d.wake_flags = r.wake_flags;
  d.waker_flips = static_cast<int>(r.waker_flips);
  d.wakee_flips = static_cast<int>(r.wakee_flips);
  d.last_wakee = r.flags & WB_DR_LAST_WAKEE;
  d.wakee_last_wakee = (r.flags & WB_DR_WAKEE_LAST_WAKEE) != 0;
  d.on_rq = r.flags & WB_DR_ON_RQ;
  d.on_cpu = r.flags & WB_DR_ON_CPU;
  d.kthread = r.flags & WB_DR_KTHREAD;
  d.allowed = mask_cpus(r.masks, mask_words);
  d.nr_idle_scan = r.nr_idle_scan;
  d.prev_nr_idle_scan = r.prev_nr_idle_scan;
  d.recent_used_cpu = r.recent_used_cpu;
  d.has_idle_cores = r.flags & WB_DR_HAS_IDLE_CORES;
  d.prev_has_idle_cores = r.flags & WB_DR_PREV_HAS_IDLE_CORES;
  d.waker_nr_running = static_cast<int>(r.waker_nr_running);
  d.waker_delayed = static_cast<int>(r.waker_delayed);
  d.prev_nr_running = static_cast<int>(r.prev_nr_running);
  d.idle = mask_cpus(r.masks + mask_words, mask_words);
  d.idle_moved = r.flags & WB_DR_IDLE_MOVED;
  if (r.flags & WB_DR_LOADS_KNOWN)
    d.loads = DecisionRecord::Loads{static_cast<long long>(r.waker_cpu_load),
                                    static_cast<long long>(r.prev_cpu_load),
                                    static_cast<long long>(r.waker_h_load),
                                    static_cast<long long>(r.wakee_h_load),
                                    r.waker_capacity,
                                    r.prev_capacity};
  d.cpu = r.cpu;
  return d;
}

std::string decision_line(const wb_decision_record& r, int mask_words) {
  char head[128];
  std::snprintf(head, sizeof head,
                "%.16s-%d [%03d] ..... %llu.%06llu: sched_wake_decision: ", r.waker_comm,
                r.waker_pid, r.waker_cpu, static_cast<unsigned long long>(r.ts_ns / 1000000000),
                static_cast<unsigned long long>(r.ts_ns % 1000000000 / 1000));
  return head +
         format_bpf_decision_fields(decision_of(r, mask_words), r.flags & WB_DR_DELAYED_KNOWN);
}

#ifdef WB_HAVE_BPF

namespace {

// libbpf's last message, for the one line of a failure (libbpf prints nothing itself).
std::string& libbpf_last() {
  static std::string last;
  return last;
}

int keep_message(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, args);
  std::string s(buf);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  if (!s.empty()) libbpf_last() = s;
  return 0;
}

// "BPF fentry on select_task_rq_fair refused (EPERM)": EPERM as root is the kernel's policy
// (lockdown, or a vendor kernel that forbids function tracing).
[[noreturn]] void fail_bpf(const std::string& what, int err) {
  throw std::runtime_error("BPF " + what + " (" +
                           (strerrorname_np(err) ? strerrorname_np(err) : std::strerror(err)) +
                           ")");
}

std::vector<int> online_cpu_list() {
  std::ifstream f("/sys/devices/system/cpu/online");
  std::string text;
  std::getline(f, text);
  return parse_cpu_list(text);
}

}  // namespace

struct DecisionRecorder::Impl {
  wake_decision* skel = nullptr;
  ring_buffer* ring = nullptr;
  int words = 1;
  uint64_t dropped_seen = 0;
  std::vector<std::string> lines;
  ~Impl() {
    ring_buffer__free(ring);
    wake_decision__destroy(skel);
  }
  static int on_record(void* ctx, void* data, size_t size) {
    auto* self = static_cast<Impl*>(ctx);
    wb_decision_record r{};
    std::memcpy(&r, data, std::min(size, sizeof r));
    self->lines.push_back(decision_line(r, self->words));
    return 0;
  }
};

DecisionRecorder::DecisionRecorder(const std::string& comm) : impl_(std::make_unique<Impl>()) {
  if (::geteuid() != 0) throw std::runtime_error("the BPF recorder needs root");
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) fail_bpf("recorder cannot count the possible CPUs", -cpus);
  if (cpus > WB_DECISION_MAX_CPUS)
    throw std::runtime_error("the BPF recorder holds " + std::to_string(WB_DECISION_MAX_CPUS) +
                             " CPUs, this machine has " + std::to_string(cpus));
  libbpf_set_print(keep_message);
  Impl& m = *impl_;
  m.words = (cpus + 63) / 64;
  m.skel = wake_decision__open();
  if (!m.skel) fail_bpf("object does not open", errno);
  std::strncpy(const_cast<char*>(m.skel->rodata->comm), comm.c_str(), 15);
  m.skel->rodata->run_tgid = getpid();
  m.skel->rodata->nr_cpus = static_cast<__u32>(cpus);
  m.skel->rodata->mask_words = static_cast<__u32>(m.words);
  for (int c : online_cpu_list())
    if (c < cpus) m.skel->bss->online[c / 64] |= 1ull << (c % 64);
  if (const int e = wake_decision__load(m.skel))
    fail_bpf("fentry on select_task_rq_fair refused", -e);
  if (const int e = wake_decision__attach(m.skel))
    fail_bpf("fentry on select_task_rq_fair not attached", -e);
  m.ring = ring_buffer__new(bpf_map__fd(m.skel->maps.records), Impl::on_record, &m, nullptr);
  if (!m.ring) fail_bpf("record ring does not open", errno);
}

DecisionRecorder::~DecisionRecorder() = default;

void DecisionRecorder::clear() {
  ring_buffer__consume(impl_->ring);
  impl_->lines.clear();
  impl_->dropped_seen = impl_->skel->bss->dropped;
}

std::vector<std::string> DecisionRecorder::drain(int64_t* lost) {
  ring_buffer__consume(impl_->ring);
  const uint64_t dropped = impl_->skel->bss->dropped;
  if (lost) *lost += static_cast<int64_t>(dropped - impl_->dropped_seen);
  impl_->dropped_seen = dropped;
  std::vector<std::string> out;
  out.swap(impl_->lines);
  return out;
}

#else

#ifndef WB_BPF_MISSING  // cmake/WbBpf.cmake names what was missing
#define WB_BPF_MISSING "built without BPF"
#endif

struct DecisionRecorder::Impl {};

DecisionRecorder::DecisionRecorder(const std::string&) {
  throw std::runtime_error("the BPF recorder was " WB_BPF_MISSING);
}
DecisionRecorder::~DecisionRecorder() = default;
void DecisionRecorder::clear() {}
std::vector<std::string> DecisionRecorder::drain(int64_t*) { return {}; }

#endif

}  // namespace wb
