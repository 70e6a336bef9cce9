#include "common/schema/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace wb {

int64_t Histogram::index_of(int64_t value) {
  if (value <= 0) return 0;
  const auto v = static_cast<uint64_t>(value);
  // Shift so that the value keeps kSubBits + 1 significant bits: v >> shift is in [128, 256).
  const int shift = std::max(0, static_cast<int>(std::bit_width(v)) - (kSubBits + 1));
  return static_cast<int64_t>(shift) * kSub + static_cast<int64_t>(v >> shift);
}

namespace {
int shift_of(int64_t index) {
  return static_cast<int>(std::max<int64_t>(0, index / Histogram::kSub - 1));
}
}  // namespace

int64_t Histogram::lower_bound(int64_t index) {
  const int shift = shift_of(index);
  return (index - static_cast<int64_t>(shift) * kSub) << shift;
}

int64_t Histogram::width(int64_t index) { return int64_t{1} << shift_of(index); }

void Histogram::add(int64_t value, int64_t count) {
  if (count <= 0) return;
  buckets_[index_of(value)] += count;
  total_ += count;
}

void Histogram::add(std::span<const int64_t> values) {
  for (int64_t v : values) add(v);
}

void Histogram::merge(const Histogram& other) {
  for (auto [i, n] : other.buckets_) buckets_[i] += n;
  total_ += other.total_;
}

double Histogram::value_at_rank(int64_t rank) const {
  int64_t seen = 0;
  for (auto [i, n] : buckets_) {
    seen += n;
    if (rank < seen)
      return static_cast<double>(lower_bound(i)) + static_cast<double>(width(i) - 1) / 2.0;
  }
  const int64_t last = buckets_.rbegin()->first;
  return static_cast<double>(lower_bound(last)) + static_cast<double>(width(last) - 1) / 2.0;
}

double Histogram::percentile(double q) const {
  if (total_ == 0) return 0;
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(total_ - 1);
  const auto lo = static_cast<int64_t>(std::floor(pos));
  const int64_t hi = std::min(lo + 1, total_ - 1);
  const double a = value_at_rank(lo), b = value_at_rank(hi);
  return a + (b - a) * (pos - static_cast<double>(lo));
}

double Histogram::cdf(double x) const {
  if (total_ == 0) return 0;
  double below = 0;
  for (auto [i, n] : buckets_) {
    const double lo = static_cast<double>(lower_bound(i)), w = static_cast<double>(width(i));
    if (x >= lo + w - 1) {
      below += static_cast<double>(n);
    } else {
      if (x >= lo) below += static_cast<double>(n) * (x - lo + 1) / w;
      break;
    }
  }
  return below / static_cast<double>(total_);
}

nlohmann::ordered_json Histogram::to_json() const {
  nlohmann::ordered_json index = nlohmann::ordered_json::array(),
                         count = nlohmann::ordered_json::array();
  for (auto [i, n] : buckets_) {
    index.push_back(i);
    count.push_back(n);
  }
  return {{"bucket_bits", kSubBits}, {"index", index}, {"count", count}};
}

Histogram Histogram::from_json(const nlohmann::json& j) {
  const auto bad = [](const std::string& what) {
    throw std::invalid_argument("histogram: " + what);
  };
  if (!j.is_object()) bad("not an object");
  if (!j.contains("bucket_bits") || j["bucket_bits"] != kSubBits)
    bad("bucket_bits is not " + std::to_string(kSubBits));
  if (!j.contains("index") || !j["index"].is_array() || !j.contains("count") ||
      !j["count"].is_array() || j["index"].size() != j["count"].size())
    bad("\"index\" and \"count\" are not arrays of one length");
  Histogram h;
  int64_t previous = -1;
  for (size_t k = 0; k < j["index"].size(); ++k) {
    const nlohmann::json &i = j["index"][k], &n = j["count"][k];
    if (!i.is_number_integer() || !n.is_number_integer()) bad("a non-integer index or count");
    const int64_t index = i.get<int64_t>(), c = n.get<int64_t>();
    if (index <= previous || index > index_of(INT64_MAX))
      bad("indexes not increasing or out of range");
    if (c <= 0) bad("a count <= 0");
    previous = index;
    h.buckets_[index] = c;
    h.total_ += c;
  }
  return h;
}

}  // namespace wb
