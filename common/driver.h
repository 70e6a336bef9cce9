// The one ping-pong driver shared by every mechanism (DESIGN.md): it places the tasks (threads of
// one case process, or one process per task), pins them and verifies the pinning with
// sched_getcpu, parks them at a barrier, runs warm-up round trips, then times every round trip
// into preallocated shared memory. A supervisor (the calling process) only waits: it polls pidfds,
// so it wakes no measured CPU while a case runs, and it kills and reaps every task when a case
// fails, times out or is interrupted. Mechanisms plug in through Mechanism and Link below.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/case.h"

namespace wb {

enum class Role { kWaker = 0, kWakee = 1 };

// One pair's channel. Created by the supervisor before the tasks exist; in processes mode each task
// gets a copy of it through fork(). Hot-loop calls return 0 or an errno and never throw.
class Link {
 public:
  virtual ~Link() = default;
  // Runs in the task, after pinning and before the barrier: e.g. close the ends it does not use.
  // May throw (the case then fails with the message).
  virtual void attach(Role /*role*/) {}
  // `from` hands off to its partner (a write, a wake, ...).
  virtual int send(Role from) noexcept = 0;
  // `me` blocks until its partner's hand-off arrives. EPIPE when the partner is gone.
  virtual int wait(Role me) noexcept = 0;
};

class Mechanism {
 public:
  virtual ~Mechanism() = default;
  virtual std::string_view id() const = 0;
  virtual WakeFlags wake_flags() const = 0;
  // One line for --help and the README: what a round trip is.
  virtual std::string_view round_trip() const = 0;
  // Why this case cannot run here ("unsupported: ...", "skipped: ..."); nullopt if it can.
  virtual std::optional<std::string> skip_reason(const CaseSpec& /*spec*/) const {
    return std::nullopt;
  }
  // Bytes of zeroed shared memory (visible to both tasks in either mode) the link needs per pair.
  virtual size_t shared_bytes(const CaseSpec& /*spec*/) const { return 0; }
  // Builds one pair's link over `shared` (shared_bytes() bytes, 64-byte aligned, zeroed).
  // Throws on setup failure.
  virtual std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const = 0;
};

// Samples of one pair, round trips in order (warm-up excluded).
struct PairSamples {
  std::vector<int64_t> rtt_ns;     // waker: send -> partner's answer back
  std::vector<int64_t> wakeup_ns;  // waker's send -> wakee back from its wait (both clocks)
  std::vector<int32_t> waker_cpu;  // sched_getcpu() of the waker when it sent
  std::vector<int32_t> wakee_cpu;  // sched_getcpu() of the wakee when it woke
};

struct RunOptions {
  double timeout_s = 60;  // whole case (one repetition), setup included
  std::vector<std::string> events;  // perf events counted on each side (libpfm4 names)
  bool require_events = false;      // an unavailable event fails the case instead of being noted
};

struct RunOutcome {
  bool ok = false;
  std::string error;  // when !ok: one line, e.g. "partner exited: killed by signal 9 (SIGKILL)"
  std::vector<PairSamples> pairs;
};

// Runs one repetition of `spec`. Never throws for failures of the case itself (they are reported
// in RunOutcome); throws std::system_error only when the supervisor cannot even start.
RunOutcome run_case(const CaseSpec& spec, const Mechanism& mech, const RunOptions& opts);

// Set from a SIGINT/SIGTERM handler: the running case stops, its tasks are killed and reaped.
extern std::atomic<bool> g_interrupted;

}  // namespace wb
