// Per-task perf counters: events named by any string libpfm4 can encode (so x86, arm64 and POWER
// native names work as well as perf's generic ones), opened with perf_event_open(2) for the calling
// thread only, user and kernel mode both counted, read as groups with time_enabled/time_running and
// scaled when the kernel multiplexed them.
//
// Life cycle inside a measured task (a std::thread or a forked child, after it pinned itself):
//   PerfCounters pc(events);   // opens everything disabled; never throws for one bad event
//   pc.enable();               // right before the first timed round trip
//   ... timed round trips ...
//   pc.disable();              // right after the last one
//   CounterBlock b = to_counter_block(pc.read(), pc.unavailable());  // plain data, e.g. into shm
// An event that cannot be opened (no PMU as in VMs, perf_event_paranoid, unknown name) lands in
// unavailable() with the reason; require_events() turns that into an error (--require-events).
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/schema/outcome.h"
#include "common/util/sys.h"

namespace wb {

// Default events: cycles, instructions, cache-misses, the LLC-miss event under the first name
// libpfm4 encodes here ("LLC_MISSES" in Intel's architectural table, else perf's generic
// "perf::LLC-LOAD-MISSES"; omitted if neither encodes), branch-misses, and the software events
// context-switches, cpu-migrations, task-clock, page-faults.
std::vector<std::string> default_events();

// One opened event after disable(). `value` is scaled to the whole enabled time when the event was
// multiplexed; it is NaN when the event was enabled but never got onto a counter (perf stat's
// "<not counted>"). task-clock is in nanoseconds, every other default event is a count.
struct CounterValue {
  std::string event;  // exactly as requested
  double value = 0;
  bool multiplexed = false;
};

// What libpfm4 makes of one event string (user + kernel privilege levels).
struct EventEncoding {
  std::string event;       // as given
  std::string fstr;        // libpfm4's fully qualified form, e.g. "perf::PERF_COUNT_SW_...:u=1:k=1"
  perf_event_attr attr{};  // valid when error is empty
  std::string error;       // empty on success, else "libpfm4: <pfm_strerror>"
};
EventEncoding encode_event(const std::string& event);

// Scaling for multiplexed events (the kernel's perf_event_read_value() semantics, as perf stat
// does it): raw * time_enabled / time_running.
struct ScaledCount {
  double value = 0;
  bool multiplexed = false;  // time_running < time_enabled
};
ScaledCount scale_count(uint64_t raw, uint64_t time_enabled, uint64_t time_running);

// The reason text for a failed perf_event_open with errno `err`. `hardware_event`: the event
// targets a CPU PMU (PERF_TYPE_HARDWARE, HW_CACHE, RAW or a dynamic PMU type); `core_pmu_present`:
// the kernel registered a CPU PMU (see core_pmu_present()); `paranoid`: kernel.perf_event_paranoid
// if readable. Exposed so that the hints are testable on machines that never produce them.
std::string explain_open_error(int err, bool hardware_event, bool core_pmu_present,
                               std::optional<int> paranoid);
std::optional<int> perf_event_paranoid();  // /proc/sys/kernel/perf_event_paranoid
bool core_pmu_present();                   // from /sys/bus/event_source/devices

class PerfCounters {
 public:
  // Opens every event for the calling thread (pid 0, cpu -1), user + kernel, disabled, inherit
  // off. Events of one PMU share a group (software events have their own); an event the kernel
  // refuses as a group member is retried as its own group leader. Duplicate names are opened once.
  // Throws std::runtime_error only if libpfm4 cannot be initialized at all.
  // Movable, not copyable (owns the event fds; closing them frees the counters).
  explicit PerfCounters(const std::vector<std::string>& events);

  // One ioctl per group leader (PERF_IOC_FLAG_GROUP); no allocation, no throw. Counts accumulate
  // over successive enable/disable windows.
  void enable() noexcept;
  void disable() noexcept;

  // Values of the opened events, in the requested order. Throws std::runtime_error if a group
  // read fails (it does not on a live fd).
  std::vector<CounterValue> read() const;
  const UnavailableEvents& unavailable() const { return unavailable_; }
  std::vector<std::string> opened() const;  // names of opened events, requested order
  std::size_t group_count() const { return groups_.size(); }

 private:
  struct Event {
    std::string name;
    Fd fd;
    uint64_t id = 0;        // PERF_EVENT_IOC_ID, matches the id in a group read
    std::size_t group = 0;  // index into groups_
  };
  struct Group {
    int key = 0;         // which PMU family the group belongs to (see perf.cpp)
    int leader_fd = -1;  // owned by the leader's Event
    std::size_t members = 0;
  };

  std::vector<Event> events_;
  std::vector<Group> groups_;
  UnavailableEvents unavailable_;
};

// Throws std::runtime_error naming every unavailable event and its reason (for --require-events),
// e.g. "required perf events unavailable on waker: cycles (perf_event_open: ENOENT (...))".
// Does nothing when `unavailable` is empty. `where` says which side/case, may be empty.
void require_events(const UnavailableEvents& unavailable, const std::string& where);

// Plain, fixed-size, trivially copyable carrier for results from a forked child (shared memory).
// Strings are truncated to fit and always NUL-terminated; entries beyond the capacity are counted
// in `dropped` and come back from from_counter_block() as one unavailable entry saying so.
struct CounterBlock {
  static constexpr std::size_t kMaxEntries = 32;
  static constexpr std::size_t kEventChars = 48;
  static constexpr std::size_t kReasonChars = 160;
  struct Value {
    char event[kEventChars];
    double value;
    uint8_t multiplexed;
  };
  struct Unavailable {
    char event[kEventChars];
    char reason[kReasonChars];
  };
  uint32_t n;
  Value v[kMaxEntries];
  uint32_t n_unavail;
  Unavailable u[kMaxEntries];
  uint32_t dropped;  // values + unavailable entries that did not fit
};
static_assert(std::is_trivially_copyable_v<CounterBlock>);
static_assert(std::is_standard_layout_v<CounterBlock>);

struct CounterResults {
  std::vector<CounterValue> values;
  UnavailableEvents unavailable;
};
CounterBlock to_counter_block(const std::vector<CounterValue>& values,
                              const UnavailableEvents& unavailable);
CounterResults from_counter_block(const CounterBlock& block);

// What libpfm4 sees on this machine (for `wakebench events`).
struct PfmEventInfo {
  std::string name;  // "pmu::EVENT"
  std::string desc;
};
struct PfmPmuInfo {
  std::string name;
  std::string desc;
  std::string type;  // "core", "uncore", "os-generic", "unknown"
  bool is_default = false;
  int num_counters = 0;
  int num_fixed_counters = 0;
  std::vector<PfmEventInfo> events;
};
// PMUs libpfm4 reports present, with their event tables. Throws std::runtime_error if libpfm4
// cannot be initialized.
std::vector<PfmPmuInfo> detected_pmus();

}  // namespace wb
