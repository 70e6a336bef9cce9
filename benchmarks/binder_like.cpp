// Binder-style synchronous transactions: W client workers and S service threads. A client writes
// its request into its transaction buffer in shared memory and rings the service pool; a service
// takes the next transaction from the pool's queue, writes the reply into the client's buffer and
// rings that client. Both rings are pipe writes, so both wakeups carry WF_SYNC, as binder's
// two-way transaction (binder_proc_transaction -> wake_up_interruptible_sync) and its reply both
// do (docs/policy-model.md section 4).

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "benchmarks/fd_io.h"
#include "benchmarks/registry.h"
#include "common/measure/shm.h"
#include "common/system/clock.h"
#include "common/util/sys.h"

namespace wb {

class BinderLikeMechanism final : public Mechanism {
 public:
  std::string_view id() const override { return "binder-like"; }
  std::string_view round_trip() const override {
    return "a client writes `payload` bytes into its shared transaction buffer and rings the "
           "service pool's queue (a pipe); one of S services takes it, writes the reply into the "
           "buffer and rings the client's reply pipe (W clients at once)";
  }
  bool client_service() const override { return true; }
  std::unique_ptr<Workload> make_workload(const CaseSpec& spec,
                                          const std::vector<CpuPair>& pairs) const override;
};

namespace {

// Task layout: tasks [0, W) are the clients (side waker, stream = client, group = client: one
// process each in processes mode); tasks [W, W+S) the services (side wakee, counters on stream 0,
// one group: one service process with S threads, like binder's thread pool in the server).
// Pinned classes put every client on the pair's waker CPU and every service on its wakee CPU.
//
// The pool's queue is the request pipe, opened in packet mode (O_DIRECT): each 4-byte record names
// a client, and one read takes exactly one record. Readers of a pipe wait as exclusive waiters
// (fs/pipe.c anon_pipe_read, wait_event_interruptible_exclusive), so one ring wakes one idle
// service, as binder_wakeup_thread_ilocked picks one waiting thread; a reader that leaves records
// behind wakes the next one. Each client has its own reply pipe.
class BinderLike final : public Workload {
 public:
  BinderLike(const CaseSpec& spec, CpuPair pair)
      : pair_(pair),
        w_(spec.params.w.value_or(1)),
        s_(spec.params.s.value_or(1)),
        payload_(static_cast<size_t>(spec.params.payload)),
        warmup_(spec.warmup),
        total_(spec.warmup + spec.round_trips) {
    Layout layout;
    const size_t done_off = layout.add(sizeof(Shared));
    buffer_stride_ = sizeof(TxHeader) + 2 * aligned(payload_);
    const size_t buffers_off = layout.add(buffer_stride_ * static_cast<size_t>(w_));
    region_ = std::make_unique<SharedRegion>(layout.size());
    shared_ = new (region_->at<void>(done_off)) Shared{};
    buffers_ = region_->at<char>(buffers_off);
    int p[2];
    check(pipe2(p, O_CLOEXEC | O_DIRECT), "pipe2(O_DIRECT)");
    request_r_.reset(p[0]);
    request_w_.reset(p[1]);
    for (int c = 0; c < w_; ++c) {
      check(pipe2(p, O_CLOEXEC), "pipe2");
      reply_r_.emplace_back(p[0]);
      reply_w_.emplace_back(p[1]);
    }
  }

  std::vector<TaskSpec> tasks() const override {
    std::vector<TaskSpec> out;
    const size_t w = static_cast<size_t>(w_);
    for (size_t c = 0; c < w; ++c)
      out.push_back({"client" + std::to_string(c), Role::kWaker, 0, c, c});
    for (size_t s = 0; s < static_cast<size_t>(s_); ++s)
      out.push_back({"service" + std::to_string(s), Role::kWakee, 0, 0, w});
    return out;
  }
  size_t streams() const override { return static_cast<size_t>(w_); }
  int64_t task_round_trips(size_t t) const override {
    return t < static_cast<size_t>(w_) ? total_ : total_ * w_;  // a service: all it could serve
  }
  CpuPair stream_cpus(size_t) const override { return pair_; }

  // Each process keeps the ends it uses, so the service pool sees EOF when every client is gone
  // and a client sees EOF when the service process is.
  void enter_process(size_t group) override {
    if (group < static_cast<size_t>(w_)) {
      request_r_.reset();
      for (int c = 0; c < w_; ++c) {
        reply_w_[c].reset();
        if (static_cast<size_t>(c) != group) reply_r_[c].reset();
      }
    } else {
      request_w_.reset();
      for (Fd& fd : reply_r_) fd.reset();
    }
  }
  void release() override {
    request_r_.reset();
    request_w_.reset();
    reply_r_.clear();
    reply_w_.clear();
  }

  int run(size_t t, TaskContext& ctx) noexcept override {
    return t < static_cast<size_t>(w_) ? run_client(static_cast<int>(t), ctx) : run_service(ctx);
  }

 private:
  static constexpr uint32_t kStop = UINT32_MAX;  // a record that tells one service to leave

  struct alignas(kHotAlign) Shared {
    std::atomic<uint32_t> clients_done;
  };
  // Head of one client's transaction buffer; the request and the reply payloads follow it.
  struct alignas(kHotAlign) TxHeader {
    int64_t round_trip;  // the transaction's index, warm-up negative
  };
  static_assert(sizeof(TxHeader) == kHotAlign);

  TxHeader& header(int c) {
    return *reinterpret_cast<TxHeader*>(buffers_ + buffer_stride_ * static_cast<size_t>(c));
  }
  char* request(int c) { return reinterpret_cast<char*>(&header(c)) + sizeof(TxHeader); }
  char* reply(int c) { return request(c) + aligned(payload_); }
  static size_t aligned(size_t bytes) { return (bytes + kHotAlign - 1) / kHotAlign * kHotAlign; }

  int run_client(int c, TaskContext& ctx) noexcept {
    StreamArea& a = ctx.stream(static_cast<size_t>(c));
    std::vector<char> local(payload_, 'c');
    const uint32_t record = static_cast<uint32_t>(c);
    char ack;
    int64_t t1 = 0;
    for (int64_t i = 0; i < total_; ++i) {
      const int64_t k = i - warmup_;
      if (k == 0) ctx.start_counting();
      const int cpu = sched_getcpu();
      const int64_t t0 = stamp();
      ctx.work(static_cast<size_t>(c));
      std::memcpy(request(c), local.data(), payload_);
      header(c).round_trip = k;
      const int64_t sent = stamp();
      int rc = write_all(request_w_.get(), reinterpret_cast<const char*>(&record), sizeof record);
      if (rc == 0) rc = read_all(reply_r_[c].get(), &ack, 1);
      if (rc == 0) std::memcpy(local.data(), reply(c), payload_);
      t1 = stamp();
      if (rc != 0) {
        ctx.fail("transaction " + std::to_string(i) + ": " + errno_name(rc));
        return 1;
      }
      if (k >= 0) a.record_round_trip(k, t0, sent, t1, cpu);
      ctx.progress(i + 1);
    }
    ctx.stop_counting();
    a.span[1] = t1;
    // The last client out sends every service its stop record.
    if (shared_->clients_done.fetch_add(1) + 1 == static_cast<uint32_t>(w_)) {
      for (int s = 0; s < s_; ++s)
        if (const int rc =
                write_all(request_w_.get(), reinterpret_cast<const char*>(&kStop), sizeof kStop);
            rc != 0) {
          ctx.fail("stopping the services: " + errno_name(rc));
          return 1;
        }
    }
    return 0;
  }

  // Serves transactions until its stop record. Counting starts with the first measured
  // transaction it takes and ends when it stops (so it includes its last wait: one context switch
  // per service in W x round_trips transactions).
  int run_service(TaskContext& ctx) noexcept {
    std::vector<char> local(payload_, 's');
    const char ack = 'r';
    bool counting = false;
    int64_t served = 0;
    for (;;) {
      uint32_t c = 0;
      int rc = read_all(request_r_.get(), reinterpret_cast<char*>(&c), sizeof c);
      const int64_t woke = stamp();
      if (rc == 0 && c == kStop) break;
      if (rc == 0 && c >= static_cast<uint32_t>(w_)) rc = EPROTO;
      if (rc != 0) {
        ctx.fail("transaction " + std::to_string(served) + ": " + errno_name(rc));
        return 1;
      }
      const int client = static_cast<int>(c);
      const int64_t k = header(client).round_trip;
      if (k >= 0) {
        if (!counting) ctx.start_counting();
        counting = true;
        StreamArea& a = ctx.stream(c);
        a.wake_ts[k] = woke;
        a.wakee_cpu[k] = sched_getcpu();
      }
      std::memcpy(local.data(), request(client), payload_);
      ctx.work(c);
      std::memcpy(reply(client), local.data(), payload_);
      rc = write_all(reply_w_[client].get(), &ack, 1);
      if (rc != 0) {
        ctx.fail("reply " + std::to_string(served) + ": " + errno_name(rc));
        return 1;
      }
      ctx.progress(++served);
    }
    if (counting) ctx.stop_counting();
    return 0;
  }

  CpuPair pair_;
  int w_, s_;
  size_t payload_;
  int64_t warmup_, total_;
  size_t buffer_stride_ = 0;
  std::unique_ptr<SharedRegion> region_;
  Shared* shared_ = nullptr;
  char* buffers_ = nullptr;
  Fd request_r_, request_w_;
  std::vector<Fd> reply_r_, reply_w_;
};

}  // namespace

std::unique_ptr<Workload> BinderLikeMechanism::make_workload(
    const CaseSpec& spec, const std::vector<CpuPair>& pairs) const {
  return std::make_unique<BinderLike>(spec, pairs.front());
}

}  // namespace wb

// Listed by all_mechanisms() in registry/registry.json's order (benchmarks/registry.h).
namespace {
const wb::MechanismRegistrar kBinderLikeMechanism(std::make_unique<wb::BinderLikeMechanism>());
}  // namespace
