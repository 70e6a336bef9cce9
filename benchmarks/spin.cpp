#include "benchmarks/spin.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#elif defined(__powerpc64__) && defined(__GLIBC__)
#include <sys/platform/ppc.h>
#endif

#include <set>

#include "benchmarks/shared_state.h"

namespace wb {

namespace {

// The architecture's spin-wait hint: it frees pipeline resources for an SMT sibling and, on x86,
// avoids the memory-order machine clear when the polled line changes (as the kernel's cpu_relax()).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#elif defined(__powerpc64__) && defined(__GLIBC__)
  __ppc_yield();
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);  // no hint: keep the compiler from folding
#endif
}

// Shared memory: a SeqChannel; the receiver busy-polls its word.
class SpinLink final : public Link {
 public:
  SpinLink(const CaseSpec& spec, void* shared) : ch_(shared, spec.params.payload) {}

  int send(Role from) noexcept override {
    ch_.publish(from);
    return 0;
  }

  int wait(Role me) noexcept override {
    while (!ch_.try_consume(me)) cpu_relax();
    return 0;
  }

 private:
  SeqChannel ch_;
};

}  // namespace

size_t SpinMechanism::shared_bytes(const CaseSpec& spec) const {
  return SeqChannel::bytes(spec.params.payload);
}

std::unique_ptr<Link> SpinMechanism::make_link(const CaseSpec& spec, void* shared) const {
  return std::make_unique<SpinLink>(spec, shared);
}

std::optional<std::string> SpinMechanism::mechanism_skip_reason(const CaseSpec& spec) const {
  if (spec.kernel) {
    if (spec.cpuset.size() < 2 * static_cast<size_t>(spec.params.pairs))
      return "unsupported: spin busy-polls and never blocks, so it needs a CPU per task (" +
             std::to_string(2 * spec.params.pairs) + ") in the cpuset";
    return std::nullopt;
  }
  std::set<int> used;
  for (auto [waker, wakee] : concurrent_pairs(spec))
    if (!used.insert(waker).second || !used.insert(wakee).second)
      return std::string(
          "unsupported: spin busy-polls and never blocks, so it cannot make progress with two "
          "tasks on one CPU");
  return std::nullopt;
}

}  // namespace wb
