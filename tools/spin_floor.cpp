// spin_floor: the reference for wakebench's spin floor (runners/overhead.sh). Two threads pinned to
// CPUs A and B bounce one cache line each way through two words, each on its own line; the floor
// is c2clat's definition: the minimum over batches of 100 round trips of the batch's time / 100,
// halved (one way, in ns). Nothing else is in the timed loop: no per-round-trip stamp, no payload.
//   spin_floor CPU_A CPU_B [BATCHES (default 20000)] [--pause] [--stamps]
// It stops after BATCHES batches or 2 s, whichever comes first (a loaded machine preempts the
// spinning threads: a batch then takes a time slice).
// --pause polls with the architecture's spin-wait hint, as wakebench's spin mechanism does.
// --stamps reads the timer where wakebench's driver does (kStampsPerRoundTrip: the answering side
// once it saw the hand-off, the other once the answer came back), to show what they cost.
// Prints "<one-way ns> <median one-way ns over batches>" on stdout.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "common/system/clock.h"

namespace {

constexpr int kBatch = 100;
constexpr uint32_t kStop = UINT32_MAX;  // in `ping`: the partner leaves
constexpr int64_t kMaxNs = 2'000'000'000;

struct alignas(256) Word {  // a line of its own on every architecture (POWER: 128, some arm64: 256)
  std::atomic<uint32_t> v{0};
};
Word ping, pong;
bool pause_hint = false;
bool stamps = false;
volatile int64_t stamp_sink;

inline void stamp_here() {
  if (stamps) stamp_sink = wb::read_counter();
}

inline void relax() {
  if (!pause_hint) return;
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#elif defined(__powerpc64__)
  asm volatile("or 27,27,27" ::: "memory");
#endif
}

int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0 && sched_getcpu() == cpu;
}

int usage() {
  std::fprintf(stderr, "usage: spin_floor CPU_A CPU_B [BATCHES] [--pause] [--stamps]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<const char*> pos;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--pause") == 0)
      pause_hint = true;
    else if (std::strcmp(argv[i], "--stamps") == 0)
      stamps = true;
    else
      pos.push_back(argv[i]);
  }
  if (pos.size() < 2 || pos.size() > 3) return usage();
  const int a = std::atoi(pos[0]), b = std::atoi(pos[1]);
  const long batches = pos.size() == 3 ? std::atol(pos[2]) : 20000;
  if (batches < 1) return usage();
  bool pinned_b = true;
  std::thread partner([&] {
    pinned_b = pin(b);
    for (uint32_t n = 1;; ++n) {
      uint32_t seen;
      while ((seen = ping.v.load(std::memory_order_acquire)) != n) {
        if (seen == kStop) return;
        relax();
      }
      stamp_here();
      pong.v.store(n, std::memory_order_release);
    }
  });
  if (!pin(a)) {
    std::fprintf(stderr, "spin_floor: cannot run on CPU %d\n", a);
    std::exit(2);  // the partner spins forever: end the process
  }
  std::vector<int64_t> per_batch;
  per_batch.reserve(static_cast<size_t>(batches));
  uint32_t n = 0;
  const int64_t end = mono_ns() + kMaxNs;
  for (long i = 0; i <= batches && (i < 2 || mono_ns() < end); ++i) {
    const int64_t t0 = mono_ns();
    for (int k = 0; k < kBatch; ++k) {
      ping.v.store(++n, std::memory_order_release);
      while (pong.v.load(std::memory_order_acquire) != n) relax();
      stamp_here();
    }
    const int64_t t1 = mono_ns();
    if (i > 0) per_batch.push_back(t1 - t0);  // the first batch warms up
  }
  ping.v.store(kStop, std::memory_order_release);
  partner.join();
  if (!pinned_b) {
    std::fprintf(stderr, "spin_floor: cannot run on CPU %d\n", b);
    return 2;
  }
  std::sort(per_batch.begin(), per_batch.end());
  const double floor_ns = static_cast<double>(per_batch.front()) / kBatch / 2;
  const double median_ns = static_cast<double>(per_batch[per_batch.size() / 2]) / kBatch / 2;
  std::printf("%.2f %.2f\n", floor_ns, median_ns);
  return 0;
}
