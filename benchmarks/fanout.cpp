// N:M fan-out (knobs w = N senders, s = M receivers): every sender wakes each receiver in turn
// and every receiver answers whichever sender asked, so both tiers keep waking tasks other than
// the one they woke last, as hackbench's groups and schbench's message threads do. Its purpose is
// to put wake_wide() (kernel/sched/fair.c) in the loop, which no one-waker-one-wakee case reaches
// (docs/policy-model.md#wake-wide).
//
// Schedule (benchmarks/fanout.h): sender i's round r goes to receiver (i + r) mod M. The sender
// writes one request (a header naming it and its round trip, then `payload` bytes) into that
// receiver's pipe and waits on its own reply pipe; the receiver reads the request and writes the
// `payload` bytes back into that sender's reply pipe. Both are pipe writes, so every wakeup
// carries WF_SYNC (docs/policy-model.md section 4).
//
// Flips: record_wakee() grows a task's wakee_flips when it wakes a task other than its last
// wakee. With M >= 2 a sender wakes a new receiver every round, so it flips once per round trip.
// In step, receiver j is asked by senders N-1, ..., 0 in N consecutive rounds of every M, so with
// N >= 2 it flips N times per M rounds. The flip rates are then about M/N apart, and wake_wide()
// (slave >= llc_size and master >= slave * llc_size, the counts halved once a second) holds when
// M >= N * llc_size: e.g. w2s8 on a 4-CPU LLC, w2s16 on an 8-CPU one. N = 1 is the control: the
// receivers always answer the same sender and never flip. N > M swaps the tiers' roles.
//
// Tasks: senders [0, N) (side waker, stream i), receivers [N, N+M) (side wakee; counters on
// stream j mod N, so only sums over a repetition's streams mean something). Processes mode: one
// process per task. Pinned classes put every sender on the pair's waker CPU and every receiver on
// its wakee CPU; kernel placement starts them there. Each stream is one sender's round trips; the
// receiver that answers round trip k records its wakeup and CPU there at k.
//
// Ending: each receiver serves exactly the requests the schedule sends it, then leaves. When a
// task fails, its partners must not wait forever: in processes mode each process keeps only the
// pipe ends it uses, so a receiver whose senders are all gone, or a sender whose receivers are,
// reads EOF; one waiting for a single dead partner among live ones is ended by the driver (its
// failure grace, then SIGKILL). In threads mode a failed task ends the case process.

#include "benchmarks/fanout.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <unistd.h>

#include <cstring>

#include "benchmarks/fd_io.h"
#include "benchmarks/registry.h"
#include "common/system/clock.h"
#include "common/util/sys.h"

namespace wb {

namespace {

// A request's head; `payload` bytes follow it in the same write.
struct RequestHeader {
  uint32_t sender;
  uint32_t unused;
  int64_t round_trip;  // the sender's round trip, warm-up negative
};
static_assert(sizeof(RequestHeader) == 16);

// Several senders write into one receiver's pipe: each request must be one atomic write.
constexpr int kMaxPayload = PIPE_BUF - static_cast<int>(sizeof(RequestHeader));

}  // namespace

class FanoutMechanism final : public Mechanism {
 public:
  std::string_view id() const override { return "fanout"; }
  std::string_view round_trip() const override {
    return "a sender writes `payload` bytes into the pipe of the next receiver in its rotation "
           "(N senders over M receivers) and waits on its reply pipe; the receiver writes them "
           "back: both tiers keep waking different tasks, so wake_wide() can hold";
  }
  bool client_service() const override { return true; }
  std::unique_ptr<Workload> make_workload(const CaseSpec& spec,
                                          const std::vector<CpuPair>& pairs) const override;

 protected:
  std::optional<std::string> mechanism_skip_reason(const CaseSpec& spec) const override {
    if (spec.params.s.value_or(1) < 2)
      return std::string(
          "unsupported: fanout needs s >= 2 receivers (w senders each wake the s receivers in "
          "turn; with one, no sender ever wakes another task), e.g. w2s8");
    if (spec.params.payload > kMaxPayload)
      return "unsupported: fanout's senders share each receiver's pipe, so a request must be "
             "one atomic write (PIPE_BUF " +
             std::to_string(PIPE_BUF) + " bytes with its " + std::to_string(sizeof(RequestHeader)) +
             "-byte header): payload at most " + std::to_string(kMaxPayload);
    return std::nullopt;
  }
};

namespace {

class Fanout final : public Workload {
 public:
  Fanout(const CaseSpec& spec, CpuPair pair)
      : pair_(pair),
        n_(spec.params.w.value_or(1)),
        m_(spec.params.s.value_or(1)),
        payload_(static_cast<size_t>(spec.params.payload)),
        warmup_(spec.warmup),
        measured_(spec.round_trips),
        total_(spec.warmup + spec.round_trips) {
    for (int j = 0; j < m_; ++j) open_pipe(request_r_, request_w_);
    for (int i = 0; i < n_; ++i) open_pipe(reply_r_, reply_w_);
  }

  std::vector<TaskSpec> tasks() const override {
    std::vector<TaskSpec> out;
    for (size_t i = 0; i < senders(); ++i)
      out.push_back({"sender" + std::to_string(i), Role::kWaker, 0, i, i});
    for (size_t j = 0; j < static_cast<size_t>(m_); ++j)
      out.push_back({"receiver" + std::to_string(j), Role::kWakee, 0, j % senders(), out.size()});
    return out;
  }
  size_t streams() const override { return senders(); }
  int64_t task_round_trips(size_t t) const override {
    return t < senders() ? total_ : fanout_requests(receiver(t), n_, m_, total_);
  }
  CpuPair stream_cpus(size_t) const override { return pair_; }

  // A sender keeps every request write end and its own reply read end; a receiver its own request
  // read end and every reply write end (group = task).
  void enter_process(size_t group) override {
    if (group < senders()) {
      keep_only(request_r_, -1);
      keep_only(reply_w_, -1);
      keep_only(reply_r_, static_cast<int>(group));
    } else {
      keep_only(request_w_, -1);
      keep_only(reply_r_, -1);
      keep_only(request_r_, receiver(group));
    }
  }
  void release() override {
    for (auto* fds : {&request_r_, &request_w_, &reply_r_, &reply_w_}) fds->clear();
  }

  int run(size_t t, TaskContext& ctx) noexcept override {
    return t < senders() ? run_sender(static_cast<int>(t), ctx) : run_receiver(receiver(t), ctx);
  }

 private:
  size_t senders() const { return static_cast<size_t>(n_); }
  int receiver(size_t task) const { return static_cast<int>(task - senders()); }
  size_t request_bytes() const { return sizeof(RequestHeader) + payload_; }

  static void open_pipe(std::vector<Fd>& r, std::vector<Fd>& w) {
    int p[2];
    check(pipe2(p, O_CLOEXEC), "pipe2");
    r.emplace_back(p[0]);
    w.emplace_back(p[1]);
  }
  // Closes every fd of `fds` but the one at `keep` (-1: all of them).
  static void keep_only(std::vector<Fd>& fds, int keep) {
    for (size_t k = 0; k < fds.size(); ++k)
      if (static_cast<int>(k) != keep) fds[k].reset();
  }

  // Each round trip: [work], request to the next receiver, wait for its answer. A round trip
  // starts where the previous one ended (one stamp per round trip, as the driver's ping-pong).
  int run_sender(int i, TaskContext& ctx) noexcept {
    StreamArea& a = ctx.stream(static_cast<size_t>(i));
    std::vector<char> request(request_bytes(), 's');
    std::vector<char> reply(payload_);
    RequestHeader head{static_cast<uint32_t>(i), 0, 0};
    int64_t t1 = stamp();
    for (int64_t r = 0; r < total_; ++r) {
      const int64_t k = r - warmup_;
      if (k == 0) {
        ctx.start_counting();
        t1 = stamp();  // after the counters' syscall
      }
      const int cpu = sched_getcpu();
      const int64_t t0 = t1;
      ctx.work(static_cast<size_t>(i));
      head.round_trip = k;
      std::memcpy(request.data(), &head, sizeof head);
      const int j = fanout_receiver(i, r, m_);
      const int64_t sent = stamp();
      int rc = write_all(request_w_[j].get(), request.data(), request.size());
      if (rc == 0) rc = read_all(reply_r_[i].get(), reply.data(), reply.size());
      t1 = stamp();
      if (rc != 0) {
        ctx.fail("round trip " + std::to_string(r) + " (receiver" + std::to_string(j) +
                 "): " + errno_name(rc));
        return 1;
      }
      if (k >= 0) a.record_round_trip(k, t0, sent, t1, cpu);
      ctx.progress(r + 1);
    }
    ctx.stop_counting();
    a.span[1] = t1;
    return 0;
  }

  // Serves the requests the schedule sends it. Counting starts with the first measured request
  // it takes and ends after its last answer (so it misses the wait before that first request).
  int run_receiver(int j, TaskContext& ctx) noexcept {
    const int64_t quota = fanout_requests(j, n_, m_, total_);
    std::vector<char> request(request_bytes());
    bool counting = false;
    for (int64_t served = 0; served < quota; ++served) {
      int rc = read_all(request_r_[j].get(), request.data(), request.size());
      const int64_t woke = stamp();
      RequestHeader head{};
      std::memcpy(&head, request.data(), sizeof head);
      if (rc == 0 && (head.sender >= senders() || head.round_trip >= measured_)) rc = EPROTO;
      if (rc != 0) {
        ctx.fail("request " + std::to_string(served) + ": " + errno_name(rc));
        return 1;
      }
      if (head.round_trip >= 0) {
        if (!counting) ctx.start_counting();
        counting = true;
        StreamArea& a = ctx.stream(head.sender);
        a.wake_ts[head.round_trip] = woke;
        a.wakee_cpu[head.round_trip] = sched_getcpu();
      }
      ctx.work(head.sender);
      rc = write_all(reply_w_[head.sender].get(), request.data() + sizeof head, payload_);
      if (rc != 0) {
        ctx.fail("reply to sender" + std::to_string(head.sender) + ": " + errno_name(rc));
        return 1;
      }
      ctx.progress(served + 1);
    }
    if (counting) ctx.stop_counting();
    return 0;
  }

  CpuPair pair_;
  int n_, m_;
  size_t payload_;
  int64_t warmup_, measured_, total_;
  std::vector<Fd> request_r_, request_w_;  // per receiver
  std::vector<Fd> reply_r_, reply_w_;      // per sender
};

}  // namespace

std::unique_ptr<Workload> FanoutMechanism::make_workload(const CaseSpec& spec,
                                                         const std::vector<CpuPair>& pairs) const {
  return std::make_unique<Fanout>(spec, pairs.front());
}

}  // namespace wb

// Listed by all_mechanisms() in registry/registry.json's order (benchmarks/registry.h).
namespace {
const wb::MechanismRegistrar kFanoutMechanism(std::make_unique<wb::FanoutMechanism>());
}  // namespace
