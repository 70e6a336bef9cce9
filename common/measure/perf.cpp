#include "common/measure/perf.h"

#include <perfmon/pfmlib_perf_event.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "common/util/sys.h"

namespace wb {
namespace {

// Group read layout (perf_event_open(2), "Reading results", PERF_FORMAT_GROUP): nr, time_enabled,
// time_running, then {value, id} per member in the order the members were added.
constexpr uint64_t kReadFormat = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                                 PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
constexpr std::size_t kGroupHeaderWords = 3;

// Group families: events of one family may share a group leader. perf_event_open() in
// kernel/events/core.c refuses (EINVAL) a hardware member whose PMU differs from its leader's, so
// PERF_TYPE_HARDWARE, HW_CACHE and RAW (all routed to the CPU PMU by perf_init_event) form one
// family, software events another (they never multiplex, so keeping them apart costs nothing), and
// every other, dynamic, PMU type its own.
constexpr int kSoftwareFamily = -1;
constexpr int kCpuFamily = -2;

int group_family(uint32_t type) {
  switch (type) {
    case PERF_TYPE_SOFTWARE:
      return kSoftwareFamily;
    case PERF_TYPE_HARDWARE:
    case PERF_TYPE_HW_CACHE:
    case PERF_TYPE_RAW:
      return kCpuFamily;
    default:
      return static_cast<int>(type);
  }
}

bool is_hardware_type(uint32_t type) {
  return type != PERF_TYPE_SOFTWARE && type != PERF_TYPE_TRACEPOINT && type != PERF_TYPE_BREAKPOINT;
}

// pfm_initialize must be called once before any other libpfm4 call; the function-local static
// makes that thread-safe. A child forked after this ran inherits the initialized tables.
void init_pfm() {
  static const int rc = pfm_initialize();
  if (rc != PFM_SUCCESS) {
    throw std::runtime_error(std::string("libpfm4: pfm_initialize failed: ") + pfm_strerror(rc));
  }
}

// libpfm4 does not document its encoder as thread-safe, and the waker and wakee threads construct
// their counters at the same time, so encoding is serialized. It is held for microseconds, never
// across a fork made by this code.
std::mutex& pfm_mutex() {
  static std::mutex m;
  return m;
}

void copy_truncated(char* dst, std::size_t cap, const std::string& src) {
  const std::size_t n = std::min(src.size(), cap - 1);
  std::memcpy(dst, src.data(), n);
  std::memset(dst + n, 0, cap - n);
}

std::string from_fixed(const char* src, std::size_t cap) {
  return std::string(src, strnlen(src, cap));
}

}  // namespace

EventEncoding encode_event(const std::string& event) {
  init_pfm();
  EventEncoding out;
  out.event = event;
  char* fstr = nullptr;
  pfm_perf_encode_arg_t arg;
  std::memset(&arg, 0, sizeof(arg));
  arg.attr = &out.attr;
  arg.fstr = &fstr;
  arg.size = sizeof(arg);
  int rc;
  {
    std::lock_guard<std::mutex> lock(pfm_mutex());
    // PFM_PLM0 | PFM_PLM3: kernel and user, because for pipe and futex round trips most cycles
    // are spent in the kernel.
    rc = pfm_get_os_event_encoding(event.c_str(), PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
  }
  if (rc != PFM_SUCCESS) {
    out.attr = perf_event_attr{};
    out.error = std::string("libpfm4: ") + pfm_strerror(rc);
  } else {
    out.attr.size = sizeof(perf_event_attr);
  }
  if (fstr != nullptr) {
    out.fstr = fstr;
    std::free(fstr);
  }
  return out;
}

std::vector<std::string> default_events() {
  std::vector<std::string> events = {"cycles", "instructions", "cache-misses"};
  // Intel's architectural event table (libpfm4 "ix86arch") names it LLC_MISSES; elsewhere perf's
  // generic cache event maps to whatever the kernel's PMU driver has for LL read misses.
  for (const char* llc : {"LLC_MISSES", "perf::LLC-LOAD-MISSES"}) {
    if (encode_event(llc).error.empty()) {
      events.emplace_back(llc);
      break;
    }
  }
  for (const char* e :
       {"branch-misses", "context-switches", "cpu-migrations", "task-clock", "page-faults"}) {
    events.emplace_back(e);
  }
  return events;
}

ScaledCount scale_count(uint64_t raw, uint64_t time_enabled, uint64_t time_running) {
  if (time_running >= time_enabled) return {static_cast<double>(raw), false};
  if (time_running == 0) return {std::numeric_limits<double>::quiet_NaN(), true};
  return {static_cast<double>(raw) *
              (static_cast<double>(time_enabled) / static_cast<double>(time_running)),
          true};
}

std::optional<int> perf_event_paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  int value = 0;
  if (in >> value) return value;
  return std::nullopt;
}

bool core_pmu_present() {
  // The CPU PMU registers as PERF_TYPE_RAW on x86 and POWER (perf_pmu_register(&pmu, "cpu",
  // PERF_TYPE_RAW) in arch/x86/events/core.c, arch/powerpc/perf/core-book3s.c); arm_pmu and
  // hybrid x86 PMUs (cpu_core, cpu_atom) get a dynamic type but expose a "cpus" attribute.
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& dev : fs::directory_iterator("/sys/bus/event_source/devices", ec)) {
    std::ifstream type_file(dev.path() / "type");
    unsigned type = 0;
    if (type_file >> type && type == PERF_TYPE_RAW) return true;
    if (fs::exists(dev.path() / "cpus", ec)) return true;
  }
  return false;
}

std::string explain_open_error(int err, bool hardware_event, bool core_pmu,
                               std::optional<int> paranoid) {
  std::string hint;
  switch (err) {
    case ENOENT:
      hint = hardware_event && !core_pmu ? "no hardware PMU; in a VM?"
                                         : "the kernel's PMU driver does not support this event";
      break;
    case EACCES:
    case EPERM: {
      // kernel/events/core.c: paranoid > 1 refuses kernel-mode counting (perf_allow_kernel), > 2
      // (Debian's patch) refuses perf_event_open altogether, without CAP_PERFMON.
      const std::string p = paranoid ? std::to_string(*paranoid) : "unreadable";
      hint = "kernel.perf_event_paranoid=" + p;
      if (paranoid && *paranoid <= 1) {
        hint += ", denied anyway (seccomp, LSM or container policy?)";
      } else {
        hint +=
            " blocks user+kernel counting; fix: sysctl -w kernel.perf_event_paranoid=1 or "
            "CAP_PERFMON";
      }
      break;
    }
    case ENODEV:
      hint = "no PMU for this event on this CPU";
      break;
    case EOPNOTSUPP:
      hint = "the PMU lacks a feature this event needs";
      break;
    case EINVAL:
      hint = "attributes invalid for this kernel or PMU; uncore events cannot count per task";
      break;
    case EMFILE:
    case ENFILE:
      hint = "out of file descriptors; raise ulimit -n";
      break;
    case EBUSY:
      hint = "PMU in exclusive use by another tool";
      break;
    case ENOSYS:
      hint = "not implemented: a kernel without CONFIG_PERF_EVENTS, or qemu-user";
      break;
    default:
      hint = strerror(err);
  }
  return "perf_event_open: " + errno_name(err) + " (" + hint + ")";
}

PerfCounters::PerfCounters(const std::vector<std::string>& events) {
  init_pfm();
  std::optional<bool> core_pmu;  // probed on the first failure only
  for (const std::string& name : events) {
    const bool seen =
        unavailable_.count(name) > 0 ||
        std::any_of(events_.begin(), events_.end(), [&](const Event& e) { return e.name == name; });
    if (seen) continue;
    EventEncoding enc = encode_event(name);
    if (!enc.error.empty()) {
      unavailable_[name] = enc.error + " (see `wakebench events`)";
      continue;
    }
    perf_event_attr attr = enc.attr;
    attr.disabled = 1;
    attr.inherit = 0;
    attr.read_format = kReadFormat;
    const int family = group_family(attr.type);
    // pid 0, cpu -1: the calling thread on whichever CPU it runs (perf_event_open(2)).
    auto open_in = [&](int group_fd) {
      // perf_event_open() is libpfm4's syscall stub (perfmon/perf_event.h).
      return perf_event_open(&attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
    };
    auto group_it = std::find_if(groups_.begin(), groups_.end(),
                                 [&](const Group& g) { return g.key == family; });
    int fd = -1;
    std::size_t group = groups_.size();
    if (group_it != groups_.end()) {
      fd = open_in(group_it->leader_fd);
      if (fd >= 0) group = static_cast<std::size_t>(group_it - groups_.begin());
    }
    if (fd < 0) {
      // No group of this family yet, or the kernel refused it as a member (e.g. the group would
      // not fit on the PMU's counters): open it as its own leader.
      fd = open_in(-1);
      if (fd >= 0) groups_.push_back({family, fd, 0});
    }
    if (fd < 0) {
      const int err = errno;
      if (!core_pmu) core_pmu = core_pmu_present();
      unavailable_[name] =
          explain_open_error(err, is_hardware_type(attr.type), *core_pmu, perf_event_paranoid());
      continue;
    }
    Fd owned(fd);
    uint64_t id = 0;
    if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
      unavailable_[name] = "ioctl(PERF_EVENT_IOC_ID): " + errno_name(errno);
      if (groups_[group].leader_fd == fd) groups_.pop_back();  // it was a new group's leader
      continue;
    }
    ++groups_[group].members;
    events_.push_back({name, std::move(owned), id, group});
  }
}

void PerfCounters::enable() noexcept {
  for (const Group& g : groups_) ioctl(g.leader_fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

void PerfCounters::disable() noexcept {
  for (const Group& g : groups_) ioctl(g.leader_fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

std::vector<CounterValue> PerfCounters::read() const {
  std::vector<CounterValue> out(events_.size());
  for (std::size_t i = 0; i < events_.size(); ++i) out[i].event = events_[i].name;
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    const Group& g = groups_[gi];
    std::vector<uint64_t> buf(kGroupHeaderWords + 2 * g.members);
    const ssize_t want = static_cast<ssize_t>(buf.size() * sizeof(uint64_t));
    const ssize_t got = ::read(g.leader_fd, buf.data(), want);
    if (got != want) {
      const int err = errno;
      const auto leader = std::find_if(events_.begin(), events_.end(),
                                       [&](const Event& e) { return e.fd.get() == g.leader_fd; });
      throw std::runtime_error("perf counters: reading the group led by " + leader->name + ": " +
                               (got < 0 ? errno_name(err) : "short read"));
    }
    // One time_enabled/time_running pair per group: members are scheduled onto the PMU together.
    for (uint64_t m = 0; m < buf[0] && m < g.members; ++m) {
      const ScaledCount s = scale_count(buf[kGroupHeaderWords + 2 * m], buf[1], buf[2]);
      const uint64_t id = buf[kGroupHeaderWords + 2 * m + 1];
      for (std::size_t i = 0; i < events_.size(); ++i) {
        if (events_[i].group != gi || events_[i].id != id) continue;
        out[i].value = s.value;
        out[i].multiplexed = s.multiplexed;
      }
    }
  }
  return out;
}

std::vector<std::string> PerfCounters::opened() const {
  std::vector<std::string> names;
  names.reserve(events_.size());
  for (const Event& e : events_) names.push_back(e.name);
  return names;
}

void require_events(const UnavailableEvents& unavailable, const std::string& where) {
  if (unavailable.empty()) return;
  std::string msg = "required perf events unavailable";
  if (!where.empty()) msg += " on " + where;
  msg += ":";
  const char* sep = " ";
  for (const auto& [event, reason] : unavailable) {
    msg += sep + event + " (" + reason + ")";
    sep = "; ";
  }
  throw std::runtime_error(msg);
}

CounterBlock to_counter_block(const std::vector<CounterValue>& values,
                              const UnavailableEvents& unavailable) {
  CounterBlock b;
  std::memset(&b, 0, sizeof(b));
  for (const CounterValue& v : values) {
    if (b.n == CounterBlock::kMaxEntries) {
      ++b.dropped;
      continue;
    }
    CounterBlock::Value& out = b.v[b.n++];
    copy_truncated(out.event, sizeof(out.event), v.event);
    out.value = v.value;
    out.multiplexed = v.multiplexed ? 1 : 0;
  }
  for (const auto& [event, reason] : unavailable) {
    if (b.n_unavail == CounterBlock::kMaxEntries) {
      ++b.dropped;
      continue;
    }
    CounterBlock::Unavailable& out = b.u[b.n_unavail++];
    copy_truncated(out.event, sizeof(out.event), event);
    copy_truncated(out.reason, sizeof(out.reason), reason);
  }
  return b;
}

CounterResults from_counter_block(const CounterBlock& b) {
  CounterResults r;
  // Clamp the counts: the block may come from shared memory a crashed child half wrote.
  const uint32_t n = std::min<uint32_t>(b.n, CounterBlock::kMaxEntries);
  const uint32_t nu = std::min<uint32_t>(b.n_unavail, CounterBlock::kMaxEntries);
  for (uint32_t i = 0; i < n; ++i) {
    r.values.push_back({from_fixed(b.v[i].event, CounterBlock::kEventChars), b.v[i].value,
                        b.v[i].multiplexed != 0});
  }
  for (uint32_t i = 0; i < nu; ++i) {
    r.unavailable[from_fixed(b.u[i].event, CounterBlock::kEventChars)] =
        from_fixed(b.u[i].reason, CounterBlock::kReasonChars);
  }
  if (b.dropped > 0) {
    r.unavailable["(more events)"] = std::to_string(b.dropped) +
                                     " more counter entries did not fit in CounterBlock (max " +
                                     std::to_string(CounterBlock::kMaxEntries) + ")";
  }
  return r;
}

std::vector<PfmPmuInfo> detected_pmus() {
  init_pfm();
  std::lock_guard<std::mutex> lock(pfm_mutex());
  std::vector<PfmPmuInfo> pmus;
  for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; ++p) {
    pfm_pmu_info_t info;
    std::memset(&info, 0, sizeof(info));
    info.size = sizeof(info);
    if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(p), &info) != PFM_SUCCESS || !info.is_present) {
      continue;
    }
    PfmPmuInfo pmu;
    pmu.name = info.name;
    pmu.desc = info.desc != nullptr ? info.desc : "";
    switch (info.type) {
      case PFM_PMU_TYPE_CORE:
        pmu.type = "core";
        break;
      case PFM_PMU_TYPE_UNCORE:
        pmu.type = "uncore";
        break;
      case PFM_PMU_TYPE_OS_GENERIC:
        pmu.type = "os-generic";
        break;
      default:
        pmu.type = "unknown";
    }
    pmu.is_default = info.is_dfl;
    pmu.num_counters = info.num_cntrs;
    pmu.num_fixed_counters = info.num_fixed_cntrs;
    for (int idx = info.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
      pfm_event_info_t ev;
      std::memset(&ev, 0, sizeof(ev));
      ev.size = sizeof(ev);
      if (pfm_get_event_info(idx, PFM_OS_NONE, &ev) != PFM_SUCCESS) continue;
      pmu.events.push_back({pmu.name + "::" + ev.name, ev.desc != nullptr ? ev.desc : ""});
    }
    pmus.push_back(std::move(pmu));
  }
  return pmus;
}

}  // namespace wb
