#pragma once

#include "common/driver.h"

namespace wb {

// Two pipes, one per direction. A pipe write wakes the blocked reader with
// wake_up_interruptible_sync_poll (fs/pipe.c anon_pipe_write): WF_SYNC.
class PipeMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "pipe"; }
  WakeFlags wake_flags() const override { return WakeFlags::kSync; }
  std::string_view round_trip() const override {
    return "waker writes `payload` bytes into a pipe; the wakee reads them and writes them back "
           "through a second pipe";
  }
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;
};

}  // namespace wb
