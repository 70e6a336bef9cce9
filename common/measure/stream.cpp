#include "common/measure/stream.h"

#include <cmath>
#include <cstring>

#include "common/measure/knobs.h"
#include "common/system/clock.h"

namespace wb {

namespace {

constexpr size_t kSpanEdges = 2;  // span[0], span[1]

template <typename T>
size_t array_bytes(const StreamArray<T>& row, size_t round_trips, size_t lines_bytes) {
  switch (row.extent) {
    case StreamExtent::kRoundTrips:
      return round_trips * sizeof(T);
    case StreamExtent::kSpanEdges:
      return kSpanEdges * sizeof(T);
    case StreamExtent::kWorkLines:
      return lines_bytes;
  }
  return 0;
}

// Row `row`'s array at `offset` of `region`, filled as the row says.
template <typename T>
T* place_array(const StreamArray<T>& row, const SharedRegion& region, size_t offset,
               size_t round_trips, size_t lines_bytes) {
  T* at = region.at<T>(offset);
  if (row.fill != 0) std::memset(at, row.fill, array_bytes(row, round_trips, lines_bytes));
  return at;
}

}  // namespace

StreamLayout::StreamLayout(Layout& layout, size_t streams, size_t round_trips, int work_lines)
    : round_trips_(round_trips), lines_bytes_(work_lines_bytes(work_lines)) {
  for (size_t s = 0; s < streams; ++s) {
    auto& offsets = offsets_.emplace_back();
    size_t i = 0;
    std::apply(
        [&](const auto&... row) {
          ((offsets[i++] = layout.add(array_bytes(row, round_trips_, lines_bytes_))), ...);
        },
        kStreamArrays);
  }
}

std::vector<StreamArea> StreamLayout::place(const SharedRegion& region) const {
  std::vector<StreamArea> out;
  for (const auto& offsets : offsets_) {
    StreamArea& area = out.emplace_back();
    size_t i = 0;
    auto place_row = [&](const auto& row) {
      area.*row.member = place_array(row, region, offsets[i++], round_trips_, lines_bytes_);
    };
    std::apply([&](const auto&... row) { (place_row(row), ...); }, kStreamArrays);
  }
  return out;
}

PairSamples read_stream(const StreamArea& area, size_t round_trips) {
  const size_t n = round_trips;
  const StampClock& clock = stamp_clock();
  PairSamples s;
  s.rtt_ns.resize(n);
  s.wakeup_ns.resize(n);
  for (size_t k = 0; k < n; ++k) {
    s.rtt_ns[k] = std::llround(clock.ns(area.rtt[k]));
    s.wakeup_ns[k] = std::llround(clock.ns(area.wake_ts[k] - area.send_ts[k]));
  }
  s.waker_cpu.assign(area.waker_cpu, area.waker_cpu + n);
  s.wakee_cpu.assign(area.wakee_cpu, area.wakee_cpu + n);
  s.begin_ns = clock.to_ns(area.span[0]);
  s.end_ns = clock.to_ns(area.span[1]);
  return s;
}

std::string pinning_breach(const PairSamples& s, CpuPair want) {
  for (size_t k = 0; k < s.waker_cpu.size(); ++k)
    for (auto [cpu, expect, who] : {std::tuple{s.waker_cpu[k], want.first, "waker"},
                                    std::tuple{s.wakee_cpu[k], want.second, "wakee"}})
      if (cpu != expect)
        return "pinning did not hold: " + std::string(who) + " ran on CPU " + std::to_string(cpu) +
               " (pinned to " + std::to_string(expect) + ") in round trip " + std::to_string(k);
  return "";
}

}  // namespace wb
