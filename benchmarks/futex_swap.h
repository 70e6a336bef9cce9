// FUTEX_SWAP's directed handoff (seed 004: wake the partner onto the current CPU and block), as
// mainline (>= 6.6) has it: seccomp user notification in sync-wakeup mode
// (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP), whose wakeups carry WF_CURRENT_CPU (kernel/seccomp.c
// seccomp_do_user_notification -> wake_up_poll_on_current_cpu; seccomp_notify_send ->
// complete_on_current_cpu; docs/policy-model.md#wake-flags).
//
// Roles. The waker is the *target*: a thread under a seccomp filter that traps one syscall
// (ioctl on a magic fd) to a user-notification listener. Its trapped syscall is its hand-off: the
// kernel queues the notification, wakes the listener's reader onto the waker's CPU, and blocks the
// waker until the answer. The wakee is the *supervisor*: SECCOMP_IOCTL_NOTIF_RECV is its wait,
// SECCOMP_IOCTL_NOTIF_SEND (the spoofed return value 0) its answer, which completes the waker onto
// the supervisor's CPU; it then blocks in the next NOTIF_RECV. So a round trip is exactly one
// directed handoff each way, like a FUTEX_SWAP ping-pong, and the waker's timestamps bracket it.
// (The other assignment, supervisor as waker, needs a pending notification before its first send.)
#pragma once

#include "common/driver.h"

namespace wb {

class FutexSwapMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "futex-swap"; }
  WakeFlags wake_flags() const override { return WakeFlags::kCurrentCpu; }
  std::string_view round_trip() const override {
    return "waker copies `payload` bytes into shared memory and issues a syscall trapped by a "
           "seccomp user-notify filter in sync-wakeup mode; the wakee, the supervisor in "
           "NOTIF_RECV, reads them and answers with NOTIF_SEND, completing the waker";
  }
  size_t shared_bytes(const CaseSpec& spec) const override;
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;

 protected:
  // Probes once per process (in a forked child) whether seccomp user notification and its
  // sync-wakeup flag are available.
  std::optional<std::string> mechanism_skip_reason(const CaseSpec& spec) const override;
};

}  // namespace wb
