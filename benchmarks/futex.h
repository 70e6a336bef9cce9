// FUTEX_WAKE then FUTEX_WAIT on one 32-bit word per direction: the FUTEX_SWAP paper's wake + wait
// baseline (seed 004). futex_wake -> wake_up_q -> wake_up_process: no WF_SYNC (docs/policy-model.md
// section 4). Private futexes in threads mode, shared ones (keyed on the page of the shared
// mapping) in processes mode.
#pragma once

#include "common/driver.h"

namespace wb {

class FutexMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "futex"; }
  WakeFlags wake_flags() const override { return WakeFlags::kNone; }
  std::string_view round_trip() const override {
    return "waker copies `payload` bytes into shared memory, bumps its sequence word and "
           "FUTEX_WAKEs; the wakee, in FUTEX_WAIT on that word, reads them and answers the same "
           "way "
           "through the other word";
  }
  size_t shared_bytes(const CaseSpec& spec) const override;
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;
};

}  // namespace wb
