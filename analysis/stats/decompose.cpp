#include "analysis/stats/decompose.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>

namespace wb {
namespace {

struct Pooled {
  std::map<std::string, std::pair<double, double>> by_class;  // class -> (round trips, sum ns)
  double round_trips = 0;
};

Pooled pool(std::span<const RepetitionTally> reps, std::span<const std::size_t> pick) {
  Pooled p;
  for (std::size_t i : pick)
    for (const ClassTally& t : reps[i]) {
      auto& [n, sum] = p.by_class[t.cls];
      n += t.round_trips;
      sum += t.round_trips * t.mean_ns;
      p.round_trips += t.round_trips;
    }
  return p;
}

struct Parts {
  double mean_a = 0, mean_b = 0, placement = 0, cost = 0;
  std::vector<ClassShift> classes;
};

Parts split(const Pooled& a, const Pooled& b, const std::vector<std::string>& order) {
  Parts parts;
  for (const std::string& cls : order) {
    ClassShift c{cls};
    const auto ia = a.by_class.find(cls), ib = b.by_class.find(cls);
    c.in_a = ia != a.by_class.end() && ia->second.first > 0;
    c.in_b = ib != b.by_class.end() && ib->second.first > 0;
    if (c.in_a) {
      c.share_a = ia->second.first / a.round_trips;
      c.mean_a = ia->second.second / ia->second.first;
    }
    if (c.in_b) {
      c.share_b = ib->second.first / b.round_trips;
      c.mean_b = ib->second.second / ib->second.first;
    }
    if (!c.in_a) c.mean_a = c.mean_b;
    if (!c.in_b) c.mean_b = c.mean_a;
    parts.mean_a += c.share_a * c.mean_a;
    parts.mean_b += c.share_b * c.mean_b;
    parts.placement += (c.share_b - c.share_a) * (c.mean_a + c.mean_b) / 2;
    parts.cost += (c.mean_b - c.mean_a) * (c.share_a + c.share_b) / 2;
    parts.classes.push_back(c);
  }
  return parts;
}

std::vector<std::string> class_order(std::span<const RepetitionTally> a,
                                     std::span<const RepetitionTally> b) {
  std::vector<std::string> order;
  for (auto reps : {a, b})
    for (const RepetitionTally& r : reps)
      for (const ClassTally& t : r)
        if (std::find(order.begin(), order.end(), t.cls) == order.end()) order.push_back(t.cls);
  return order;
}

Bounds percentile(std::vector<double> v, double confidence) {
  std::sort(v.begin(), v.end());
  const double tail = (1 - confidence) / 2 * static_cast<double>(v.size() - 1);
  const auto at = [&](double pos) { return v[static_cast<std::size_t>(std::lround(pos))]; };
  return {at(tail), at(static_cast<double>(v.size() - 1) - tail)};
}

std::vector<std::size_t> all_of(std::size_t n) {
  std::vector<std::size_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace

Decomposition decompose(std::span<const RepetitionTally> a, std::span<const RepetitionTally> b,
                        const DecomposeOptions& options) {
  const std::vector<std::size_t> ia = all_of(a.size()), ib = all_of(b.size());
  const Pooled pa = pool(a, ia), pb = pool(b, ib);
  if (pa.round_trips <= 0 || pb.round_trips <= 0)
    throw std::invalid_argument("decompose: a side has no round trip with an observed class");
  const std::vector<std::string> order = class_order(a, b);
  const Parts whole = split(pa, pb, order);
  Decomposition d{whole.mean_a, whole.mean_b, whole.placement, whole.cost};
  d.classes = whole.classes;
  d.confidence = options.confidence;
  std::mt19937_64 rng(options.seed);
  std::vector<double> placement, cost, delta;
  std::vector<std::size_t> pick_a(a.size()), pick_b(b.size());
  for (int r = 0; r < options.resamples; ++r) {
    for (auto& i : pick_a) i = std::uniform_int_distribution<std::size_t>(0, a.size() - 1)(rng);
    for (auto& i : pick_b) i = std::uniform_int_distribution<std::size_t>(0, b.size() - 1)(rng);
    const Pooled ra = pool(a, pick_a), rb = pool(b, pick_b);
    if (ra.round_trips <= 0 || rb.round_trips <= 0) continue;
    const Parts p = split(ra, rb, order);
    placement.push_back(p.placement);
    cost.push_back(p.cost);
    delta.push_back(p.mean_b - p.mean_a);
  }
  if (!delta.empty()) {
    d.placement_ci = percentile(placement, options.confidence);
    d.cost_ci = percentile(cost, options.confidence);
    d.delta_ci = percentile(delta, options.confidence);
  }
  return d;
}

}  // namespace wb
