#include "benchmarks/registry.h"

#include "benchmarks/binder_like.h"
#include "benchmarks/eventfd.h"
#include "benchmarks/futex.h"
#include "benchmarks/futex_swap.h"
#include "benchmarks/pipe.h"
#include "benchmarks/spin.h"
#include "benchmarks/tcp.h"
#include "benchmarks/unix.h"

namespace wb {

const std::vector<const Mechanism*>& all_mechanisms() {
  static const PipeMechanism pipe;
  static const UnixStreamMechanism unix_stream;
  static const UnixDgramMechanism unix_dgram;
  static const TcpLoopbackMechanism tcp_loopback;
  static const EventfdMechanism eventfd;
  static const FutexMechanism futex;
  static const FutexSwapMechanism futex_swap;
  static const BinderLikeMechanism binder_like;
  static const SpinMechanism spin;
  static const std::vector<const Mechanism*> all = {&pipe,         &unix_stream, &unix_dgram,
                                                    &tcp_loopback, &eventfd,     &futex,
                                                    &futex_swap,   &binder_like, &spin};
  return all;
}

const Mechanism* find_mechanism(std::string_view id) {
  for (const Mechanism* m : all_mechanisms())
    if (m->id() == id) return m;
  return nullptr;
}

}  // namespace wb
