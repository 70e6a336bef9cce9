// FUTEX_SWAP's directed handoff (seed 004: wake the partner onto the current CPU and block), as
// mainline (>= 6.6) has it: seccomp user notification in sync-wakeup mode
// (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP), whose wakeups carry WF_CURRENT_CPU (kernel/seccomp.c
// seccomp_do_user_notification -> wake_up_poll_on_current_cpu; seccomp_notify_send ->
// complete_on_current_cpu; docs/policy-model.md section 4).
//
// Roles. The waker is the *target*: a thread under a seccomp filter that traps one syscall
// (ioctl on a magic fd) to a user-notification listener. Its trapped syscall is its hand-off: the
// kernel queues the notification, wakes the listener's reader onto the waker's CPU, and blocks the
// waker until the answer. The wakee is the *supervisor*: SECCOMP_IOCTL_NOTIF_RECV is its wait,
// SECCOMP_IOCTL_NOTIF_SEND (the spoofed return value 0) its answer, which completes the waker onto
// the supervisor's CPU; it then blocks in the next NOTIF_RECV. So a round trip is exactly one
// directed handoff each way, like a FUTEX_SWAP ping-pong, and the waker's timestamps bracket it.
// (The other assignment, supervisor as waker, needs a pending notification before its first send.)

#include <endian.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "benchmarks/registry.h"
#include "benchmarks/shared_state.h"
#include "common/util/sys.h"

namespace wb {

class FutexSwapMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "futex-swap"; }
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

namespace {

// Linux 6.6 uapi (include/uapi/linux/seccomp.h), missing from Debian 12's 6.1 headers: the
// listener ioctl that sets its flags, and the flag that turns on sync wakeups.
constexpr unsigned long kNotifSetFlags = _IOW(SECCOMP_IOC_MAGIC, 4, __u64);
constexpr __u64 kUserNotifFdSyncWakeUp = 1ULL << 0;

#if defined(__x86_64__)
constexpr __u32 kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr __u32 kAuditArch = AUDIT_ARCH_AARCH64;
#elif defined(__powerpc64__) && __BYTE_ORDER == __LITTLE_ENDIAN
constexpr __u32 kAuditArch = AUDIT_ARCH_PPC64LE;
#elif defined(__powerpc64__)
constexpr __u32 kAuditArch = AUDIT_ARCH_PPC64;
#else
constexpr __u32 kAuditArch = 0;  // unknown: mechanism_skip_reason says so
#endif

// The trapped syscall: ioctl on an fd number no process has open (so a syscall that slips past the
// filter fails with EBADF instead of doing anything).
constexpr int kMagicFd = 0x77616b65;  // "wake"

// The low 32 bits of the first syscall argument inside seccomp_data.
constexpr __u32 kArg0Low =
    offsetof(seccomp_data, args[0]) + (__BYTE_ORDER == __LITTLE_ENDIAN ? 0 : sizeof(__u32));

// Traps ioctl(kMagicFd, ...) of this architecture to the listener; allows everything else.
int install_filter() {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 0, 5),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0Low),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<__u32>(kMagicFd), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  // Without CAP_SYS_ADMIN a filter needs no_new_privs; it stays with this thread (no TSYNC).
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return static_cast<int>(
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
}

// One byte carrying one SCM_RIGHTS fd (the seccomp listener, from the waker to the supervisor).
struct FdMessage {
  char data = 'L';
  iovec iov{&data, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  FdMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;
};

void send_fd(int sock, int fd) {
  FdMessage m;
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  check(sendmsg(sock, &m.msg, MSG_NOSIGNAL), "sendmsg(seccomp listener)");
}

Fd receive_fd(int sock) {
  FdMessage m;
  ssize_t n;
  do n = recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  check(n, "recvmsg(seccomp listener)");
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  if (n == 0 || !c || c->cmsg_type != SCM_RIGHTS)
    throw std::runtime_error("the waker exited before handing over its seccomp listener");
  int fd;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return Fd(fd);
}

class FutexSwapLink final : public Link {
 public:
  FutexSwapLink(const CaseSpec& spec, void* shared)
      : payload_(shared, spec.params.payload), processes_(spec.mode == Mode::kProcesses) {
    int sv[2];
    check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), "socketpair");
    handover_[0].reset(sv[0]);
    handover_[1].reset(sv[1]);
  }

  // The waker installs the filter on its own thread and hands the listener to the wakee, keeping
  // no copy: once the wakee is gone, the waker's trapped syscall fails (ENOSYS) instead of hanging.
  void attach(Role role) override {
    const int me = static_cast<int>(role);
    if (processes_) handover_[1 - me].reset();
    if (role == Role::kWaker) {
      Fd listener(install_filter());
      if (!listener) check(-1, "seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER)");
      const __u64 flags = kUserNotifFdSyncWakeUp;
      check(ioctl(listener.get(), kNotifSetFlags, flags),
            "ioctl(SECCOMP_IOCTL_NOTIF_SET_FLAGS, SYNC_WAKE_UP)");
      send_fd(handover_[0].get(), listener.get());
    } else {
      listener_ = receive_fd(handover_[1].get());
    }
    handover_[me].reset();
  }

  // Waker: the whole hand-off and the wait for the answer are its trapped syscall.
  int send(Role from) noexcept override {
    payload_.put(from);
    if (from == Role::kWaker) {
      int& rc = waker_rc_.value;
      rc = syscall(__NR_ioctl, kMagicFd, 0, 0) == 0 ? 0 : errno;
      if (rc == ENOSYS) rc = EPIPE;  // the listener is gone (seccomp.c)
      return 0;
    }
    seccomp_notif_resp resp{};
    resp.id = pending_id_.value;
    for (;;) {
      if (ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0) return 0;
      if (errno != EINTR) return errno;
    }
  }

  int wait(Role me) noexcept override {
    if (me == Role::kWaker) {
      if (waker_rc_.value == 0) payload_.get(me);
      return waker_rc_.value;
    }
    seccomp_notif req;
    for (;;) {
      std::memset(&req, 0, sizeof req);  // NOTIF_RECV refuses a non-zeroed buffer (EINVAL)
      if (ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, &req) == 0) break;
      if (errno != EINTR) return errno;
    }
    pending_id_.value = req.id;
    payload_.get(me);
    return 0;
  }

 private:
  SharedPayload payload_;
  bool processes_;
  Fd handover_[2];  // socketpair: [0] the waker's end, [1] the wakee's
  Fd listener_;     // the wakee's
  // Each written by one side only, on a line of its own (threads mode shares this object).
  OwnLine<__u64> pending_id_;  // the wakee's
  OwnLine<int> waker_rc_;      // the waker's
};

std::optional<std::string> probe_sync_wakeups() {
  if (kAuditArch == 0) return "unsupported: no seccomp filter for this architecture in wakebench";
  // In a child: a seccomp filter and no_new_privs cannot be removed from a thread.
  const pid_t pid = fork();
  if (pid < 0) return "unsupported: cannot probe seccomp (fork: " + errno_name(errno) + ")";
  if (pid == 0) {
    const int listener = install_filter();
    if (listener < 0) _exit(errno & 0x7f);
    const __u64 flags = kUserNotifFdSyncWakeUp;
    _exit(ioctl(listener, kNotifSetFlags, flags) == 0 ? 0 : 200);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::nullopt;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 200)
    return "unsupported: kernel lacks seccomp sync wakeups (Linux >= 6.6)";
  if (WIFEXITED(status))
    return "unsupported: seccomp user notification unavailable (seccomp: " +
           errno_name(WEXITSTATUS(status)) + ")";
  return "unsupported: seccomp probe " + describe_wait_status(status);
}

}  // namespace

size_t FutexSwapMechanism::shared_bytes(const CaseSpec& spec) const {
  return SharedPayload::bytes(spec.params.payload);
}

std::unique_ptr<Link> FutexSwapMechanism::make_link(const CaseSpec& spec, void* shared) const {
  return std::make_unique<FutexSwapLink>(spec, shared);
}

std::optional<std::string> FutexSwapMechanism::mechanism_skip_reason(const CaseSpec&) const {
  static const std::optional<std::string> reason = probe_sync_wakeups();
  return reason;
}

}  // namespace wb

// Listed by all_mechanisms() in registry/registry.json's order (benchmarks/registry.h).
namespace {
const wb::MechanismRegistrar kFutexSwapMechanism(std::make_unique<wb::FutexSwapMechanism>());
}  // namespace
