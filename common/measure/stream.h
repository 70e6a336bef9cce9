// One stream of samples in a case's shared memory (common/measure/shm.h), laid out from one table:
// kStreamArrays names each array of StreamArea, how long it is and what it starts as. The driver
// (common/measure/driver.cpp) lays the streams out and places them from it (StreamLayout) and
// reads them back once the tasks are gone (read_stream); a mechanism's tasks write them
// (TaskContext::stream, common/measure/mechanism.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "common/measure/shm.h"
#include "common/schema/outcome.h"
#include "common/schema/placement.h"

namespace wb {

// One stream: one pair's round trips, or one binder-like client's transactions. Index k is the
// k-th measured round trip (warm-up excluded). Times are stamp() ticks (common/system/clock.h),
// turned into ns when the case is collected. Each member is one row of kStreamArrays.
struct StreamArea {
  int64_t* send_ts;    // the waker's hand-off (after its work)
  int64_t* wake_ts;    // the wakee back from its wait
  int64_t* rtt;        // the waker's round trip: start (before its work) -> answer back
  int32_t* waker_cpu;  // sched_getcpu() of the waker when it started the round trip
  int32_t* wakee_cpu;  // sched_getcpu() of the wakee once it answered (the CPU it woke on, pinned)
  int64_t* span;       // [0]: start of the first measured round trip, [1]: end of the last
  char* lines;         // the work_lines cache lines both sides write (the work knob)

  // The waker's record of measured round trip k: started at t0 on `cpu`, handed off at `sent`,
  // answered at t1. The first one also opens the stream's span.
  void record_round_trip(int64_t k, int64_t t0, int64_t sent, int64_t t1, int32_t cpu) noexcept {
    if (k == 0) span[0] = t0;
    send_ts[k] = sent;
    rtt[k] = t1 - t0;
    waker_cpu[k] = cpu;
  }
};

// How long one of a stream's arrays is: one element per measured round trip, the span's two edges
// (start, end), or the work_lines knob's bytes (its cache lines at the run-time line size).
enum class StreamExtent { kRoundTrips, kSpanEdges, kWorkLines };

// One array of StreamArea: the member, its length, and the byte it starts filled with (the region
// is zeroed). Its element size is the member's type.
template <typename T>
struct StreamArray {
  T* StreamArea::*member;
  StreamExtent extent;
  unsigned char fill = 0;
};

// The stream's arrays in the order they are laid out, each on its own kHotAlign block. A CPU that
// no task wrote reads -1 (0xff bytes) and fails the pinning check instead of passing as CPU 0.
inline constexpr std::tuple kStreamArrays{
    StreamArray<int64_t>{&StreamArea::send_ts, StreamExtent::kRoundTrips},
    StreamArray<int64_t>{&StreamArea::wake_ts, StreamExtent::kRoundTrips},
    StreamArray<int64_t>{&StreamArea::rtt, StreamExtent::kRoundTrips},
    StreamArray<int32_t>{&StreamArea::waker_cpu, StreamExtent::kRoundTrips, 0xff},
    StreamArray<int32_t>{&StreamArea::wakee_cpu, StreamExtent::kRoundTrips, 0xff},
    StreamArray<int64_t>{&StreamArea::span, StreamExtent::kSpanEdges},
    StreamArray<char>{&StreamArea::lines, StreamExtent::kWorkLines},
};
inline constexpr size_t kStreamArrayCount = std::tuple_size_v<decltype(kStreamArrays)>;
// StreamArea holds pointers only, one per row: a member without its row does not compile.
static_assert(sizeof(StreamArea) == kStreamArrayCount * sizeof(void*),
              "every member of StreamArea needs its row in kStreamArrays");
static_assert(std::is_standard_layout_v<StreamArea> && std::is_trivially_copyable_v<StreamArea>);

// A case's streams in its shared memory: reserved in `layout` beside the driver's own blocks,
// then placed once the region exists.
class StreamLayout {
 public:
  // `streams` streams of `round_trips` measured round trips and `work_lines` cache lines each.
  StreamLayout(Layout& layout, size_t streams, size_t round_trips, int work_lines);
  // Each stream's arrays in `region` (sized by the layout above), filled as the table says.
  std::vector<StreamArea> place(const SharedRegion& region) const;

 private:
  size_t round_trips_, lines_bytes_;
  std::vector<std::array<size_t, kStreamArrayCount>> offsets_;  // per stream, per row
};

// One stream's samples once its tasks are gone, stamps turned into ns (stamp_clock()).
PairSamples read_stream(const StreamArea& area, size_t round_trips);

// "" when every sample of `s` ran on `want`'s [waker, wakee] CPUs, else the first that did not:
// "pinning did not hold: wakee ran on CPU 3 (pinned to 2) in round trip 17".
std::string pinning_breach(const PairSamples& s, CpuPair want);

}  // namespace wb
