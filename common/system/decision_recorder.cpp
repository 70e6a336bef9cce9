#include "common/system/decision_recorder.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "common/schema/registry.h"
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

constexpr std::pair<RecorderChoice, std::string_view> kChoices[] = {
    {RecorderChoice::kAuto, "auto"},
    {RecorderChoice::kFentry, "fentry"},
    {RecorderChoice::kTpBtf, "tp_btf"}};

// A tp_btf record's wake flags: WF_TTWU as read, and the mechanism's for a case task's wake.
void take_wake_flags(DecisionRecord& d, const wb_decision_record& r, const CaseWake& wake) {
  d.source = DecisionSource::kTpBtf;
  if (!(r.flags & WB_DR_WAKER_OURS)) {
    d.wake_flags_from = "outside";
  } else if (wake.mechanism.empty()) {
    d.wake_flags_from = "unknown";
  } else {
    d.wake_flags |= wake.flags;
    d.wake_flags_from = "registry:" + wake.mechanism;
  }
}

}  // namespace

std::string_view recorder_choice_id(RecorderChoice c) {
  for (const auto& [v, id] : kChoices)
    if (v == c) return id;
  return "auto";
}

std::optional<RecorderChoice> parse_recorder_choice(std::string_view id) {
  for (const auto& [v, name] : kChoices)
    if (name == id) return v;
  return std::nullopt;
}

CaseWake case_wake(const std::string& mechanism) {
  switch (registry().mechanism(mechanism).wake_flags) {
    case WakeFlags::kSync:
      return {kWfSync, mechanism};
    case WakeFlags::kCurrentCpu:
      return {kWfCurrentCpu, mechanism};
    case WakeFlags::kNone:
      break;
  }
  return {0, mechanism};
}

DecisionRecord decision_of(const wb_decision_record& r, int mask_words, const CaseWake& wake) {
  DecisionRecord d;
  d.source = DecisionSource::kBpf;
  d.pid = r.pid;
  d.waker_cpu = r.waker_cpu;
  d.prev = r.prev;
  d.wake_flags = r.wake_flags;
  if (r.flags & WB_DR_AT_WAKING) take_wake_flags(d, r, wake);
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

std::string decision_line(const wb_decision_record& r, int mask_words, const CaseWake& wake) {
  char head[128];
  std::snprintf(head, sizeof head,
                "%.16s-%d [%03d] ..... %llu.%06llu: sched_wake_decision: ", r.waker_comm,
                r.waker_pid, r.waker_cpu, static_cast<unsigned long long>(r.ts_ns / 1000000000),
                static_cast<unsigned long long>(r.ts_ns % 1000000000 / 1000));
  return head + format_bpf_decision_fields(decision_of(r, mask_words, wake),
                                           r.flags & WB_DR_DELAYED_KNOWN);
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

// The open object with one of its program sets to load (the other left out).
wake_decision* open_object(const std::string& comm, int cpus, bool fentry) {
  wake_decision* skel = wake_decision__open();
  if (!skel) fail_bpf("object does not open", errno);
  std::strncpy(const_cast<char*>(skel->rodata->comm), comm.c_str(), 15);
  skel->rodata->run_tgid = getpid();
  skel->rodata->nr_cpus = static_cast<__u32>(cpus);
  skel->rodata->mask_words = static_cast<__u32>((cpus + 63) / 64);
  for (int c : online_cpu_list())
    if (c < cpus) skel->bss->online[c / 64] |= 1ull << (c % 64);
  for (bpf_program* p : {skel->progs.decision_entry, skel->progs.decision_exit})
    bpf_program__set_autoload(p, fentry);
  for (bpf_program* p : {skel->progs.waking, skel->progs.wake_moved, skel->progs.woken})
    bpf_program__set_autoload(p, !fentry);
  bpf_program__set_autoattach(skel->progs.note_rq, false);  // note_runqueues() attaches it
  return skel;
}

// Each online CPU's runqueue, noted by note_rq at a context switch there: a thread of this
// process sleeps once on each CPU it may use, and the others get up to half a second to switch.
// Throws when one stays unnoted (a kernel without CONFIG_FAIR_GROUP_SCHED: no cfs_rq->rq).
void note_runqueues(wake_decision* skel, const std::vector<int>& online) {
  bpf_link* link = bpf_program__attach(skel->progs.note_rq);
  if (!link) fail_bpf("tp_btf on sched_switch not attached", errno);
  for (int c : online)
    std::thread([c] {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(c, &set);
      if (sched_setaffinity(0, sizeof set, &set) == 0) ::usleep(1000);
    }).join();
  const auto unnoted = [&] {
    for (int c : online)
      if (!skel->bss->rq_addr[c]) return c;
    return -1;
  };
  for (int i = 0; i < 50 && unnoted() >= 0; ++i) ::usleep(10'000);
  bpf_link__destroy(link);
  if (const int c = unnoted(); c >= 0)
    throw std::runtime_error("BPF recorder: the runqueue of CPU " + std::to_string(c) +
                             " was not seen (a kernel without CONFIG_FAIR_GROUP_SCHED)");
}

using Object = std::unique_ptr<wake_decision, decltype(&wake_decision__destroy)>;

// The object loaded and attached, or the one line why not.
Object attach_object(const std::string& comm, int cpus, bool fentry) {
  Object skel(open_object(comm, cpus, fentry), wake_decision__destroy);
  const std::string what = fentry ? "fentry on select_task_rq_fair" : "tp_btf on sched_waking";
  if (const int e = wake_decision__load(skel.get())) fail_bpf(what + " refused", -e);
  std::vector<int> online;
  for (int c : online_cpu_list())
    if (c < cpus) online.push_back(c);
  note_runqueues(skel.get(), online);
  if (const int e = wake_decision__attach(skel.get())) fail_bpf(what + " not attached", -e);
  return skel;
}

}  // namespace

struct DecisionRecorder::Impl {
  wake_decision* skel = nullptr;
  ring_buffer* ring = nullptr;
  int words = 1;
  DecisionSource source = DecisionSource::kBpf;
  std::string fallback;
  CaseWake wake;
  uint64_t lost_seen = 0;
  bool discard = false;                                 // clear(): records consumed unread
  std::vector<std::pair<uint64_t, std::string>> lines;  // (time, line)
  ~Impl() {
    ring_buffer__free(ring);
    wake_decision__destroy(skel);
  }
  uint64_t lost() const { return skel->bss->dropped + skel->bss->unpaired; }
  static int on_record(void* ctx, void* data, size_t size) {
    auto* self = static_cast<Impl*>(ctx);
    if (self->discard) return 0;
    wb_decision_record r{};
    std::memcpy(&r, data, std::min(size, sizeof r));
    self->lines.emplace_back(r.ts_ns, decision_line(r, self->words, self->wake));
    return 0;
  }
  // fentry, or tp_btf: as chosen, auto falling back to tp_btf with the reason kept.
  void attach(const std::string& comm, int cpus, RecorderChoice choice) {
    if (choice != RecorderChoice::kTpBtf) {
      try {
        skel = attach_object(comm, cpus, true).release();
        return;
      } catch (const std::runtime_error& e) {
        if (choice == RecorderChoice::kFentry) throw;
        fallback = e.what();
      }
    }
    try {
      skel = attach_object(comm, cpus, false).release();
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fallback.empty() ? e.what() : fallback + "; " + e.what());
    }
    source = DecisionSource::kTpBtf;
  }
};

DecisionRecorder::DecisionRecorder(const std::string& comm, RecorderChoice choice)
    : impl_(std::make_unique<Impl>()) {
  if (::geteuid() != 0) throw std::runtime_error("the BPF recorder needs root");
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) fail_bpf("recorder cannot count the possible CPUs", -cpus);
  if (cpus > WB_DECISION_MAX_CPUS)
    throw std::runtime_error("the BPF recorder holds " + std::to_string(WB_DECISION_MAX_CPUS) +
                             " CPUs, this machine has " + std::to_string(cpus));
  libbpf_set_print(keep_message);
  Impl& m = *impl_;
  m.words = (cpus + 63) / 64;
  m.attach(comm, cpus, choice);
  m.ring = ring_buffer__new(bpf_map__fd(m.skel->maps.records), Impl::on_record, &m, nullptr);
  if (!m.ring) fail_bpf("record ring does not open", errno);
}

DecisionRecorder::~DecisionRecorder() = default;

DecisionSource DecisionRecorder::source() const { return impl_->source; }
const std::string& DecisionRecorder::fallback_reason() const { return impl_->fallback; }
void DecisionRecorder::set_case_wake(const CaseWake& wake) { impl_->wake = wake; }

// Unread: the records of what ran since the last drain (other cases' wakeups) are thrown away at
// once, not formatted first; the kernel case's pair starts right after (docs/cli.md#trace-settle).
void DecisionRecorder::clear() {
  impl_->discard = true;
  ring_buffer__consume(impl_->ring);
  impl_->discard = false;
  impl_->lines.clear();
  impl_->lost_seen = impl_->lost();
}

// In time order: a tp_btf record reaches the ring at its wake's end, stamped at its start.
std::vector<std::string> DecisionRecorder::drain(int64_t* lost) {
  ring_buffer__consume(impl_->ring);
  const uint64_t now = impl_->lost();
  if (lost) *lost += static_cast<int64_t>(now - impl_->lost_seen);
  impl_->lost_seen = now;
  std::stable_sort(impl_->lines.begin(), impl_->lines.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  out.reserve(impl_->lines.size());
  for (auto& [ts, line] : impl_->lines) out.push_back(std::move(line));
  impl_->lines.clear();
  return out;
}

#else

#ifndef WB_BPF_MISSING  // cmake/WbBpf.cmake names what was missing
#define WB_BPF_MISSING "built without BPF"
#endif

struct DecisionRecorder::Impl {};

DecisionRecorder::DecisionRecorder(const std::string&, RecorderChoice) {
  throw std::runtime_error("the BPF recorder was " WB_BPF_MISSING);
}
DecisionRecorder::~DecisionRecorder() = default;
DecisionSource DecisionRecorder::source() const { return DecisionSource::kBpf; }
const std::string& DecisionRecorder::fallback_reason() const {
  static const std::string none;
  return none;
}
void DecisionRecorder::set_case_wake(const CaseWake&) {}
void DecisionRecorder::clear() {}
std::vector<std::string> DecisionRecorder::drain(int64_t*) { return {}; }

#endif

}  // namespace wb
