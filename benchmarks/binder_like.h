// Binder-style synchronous transactions: W client workers and S service threads. A client writes
// its request into its transaction buffer in shared memory and rings the service pool; a service
// takes the next transaction from the pool's queue, writes the reply into the client's buffer and
// rings that client. Both rings are pipe writes, so both wakeups carry WF_SYNC, as binder's
// two-way transaction (binder_proc_transaction -> wake_up_interruptible_sync) and its reply both
// do (docs/policy-model.md#wake-flags).
#pragma once

#include "common/driver.h"

namespace wb {

class BinderLikeMechanism final : public Mechanism {
 public:
  std::string_view id() const override { return "binder-like"; }
  WakeFlags wake_flags() const override { return WakeFlags::kSync; }
  std::string_view round_trip() const override {
    return "a client writes `payload` bytes into its shared transaction buffer and rings the "
           "service pool's queue (a pipe); one of S services takes it, writes the reply into the "
           "buffer and rings the client's reply pipe (W clients at once)";
  }
  bool client_service() const override { return true; }
  std::unique_ptr<Workload> make_workload(const CaseSpec& spec,
                                          const std::vector<CpuPair>& pairs) const override;
};

}  // namespace wb
