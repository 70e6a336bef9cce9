#include "analysis/compare/noise.h"

#include <cmath>
#include <stdexcept>

#include "analysis/compare/compare.h"
#include "common/util/input.h"

namespace wb {

std::optional<double> NoiseFloor::floor(const std::string& case_key,
                                        const std::string& metric) const {
  const auto c = floor_pct.find(case_key);
  if (c == floor_pct.end()) return std::nullopt;
  const auto m = c->second.find(metric);
  if (m == c->second.end()) return std::nullopt;
  return m->second;
}

const std::vector<std::string>& noise_metrics() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> v;
    for (const char* s : {"min", "mean", "median", "p90", "p99", "p999", "max"}) {
      v.emplace_back(s);
      v.push_back(std::string("wakeup-") + s);
    }
    v.emplace_back("tps");
    return v;
  }();
  return ids;
}

namespace {

// One machine, one config (by its hash), no set twice, and enough repetitions in every ok case.
void check_aa_sets(const std::vector<ResultSet>& sets) {
  using E = std::invalid_argument;
  const ResultSet& a = sets.front();
  for (const ResultSet& b : sets) {
    for (const CaseView& c : b.views)
      if (c.ok() && c.repetitions.size() < kMinNoiseRepetitions)
        throw E("noise: " + b.path + ": case " + c.name + " has " +
                std::to_string(c.repetitions.size()) + " repetitions (an A/A floor needs >= " +
                std::to_string(kMinNoiseRepetitions) + " per case)");
    if (&b == &a) continue;
    if (b.machine.hostname != a.machine.hostname)
      throw E("noise: " + a.path + " and " + b.path + " are from different machines (\"" +
              a.machine.hostname + "\", \"" + b.machine.hostname + "\")");
    if (b.machine.config_hash != a.machine.config_hash)
      throw E("noise: " + a.path + " and " + b.path + " ran different configs (config_hash)");
  }
  for (std::size_t i = 0; i < sets.size(); ++i)
    for (std::size_t j = i + 1; j < sets.size(); ++j)
      if (sets[i].set == sets[j].set)
        throw E("noise: " + sets[i].path + " and " + sets[j].path +
                " are the same result set (an A/A floor needs two runs)");
}

}  // namespace

NoiseFloor measure_noise(const std::vector<ResultSet>& sets) {
  if (sets.size() < 2) throw std::invalid_argument("noise needs at least two A/A result sets");
  check_aa_sets(sets);
  NoiseFloor n;
  for (const ResultSet& rs : sets) n.sets.push_back(rs.path);
  n.hostname = sets[0].machine.hostname;
  // Every pair of sets, through compare itself: set i as the base against every later one.
  for (std::size_t i = 0; i + 1 < sets.size(); ++i) {
    const std::vector<ResultSet> group(sets.begin() + static_cast<long>(i), sets.end());
    for (const std::string& id : noise_metrics()) {
      CompareOptions o;
      o.metric = parse_metric(id);
      Comparison cmp;
      try {
        cmp = compare_result_sets(group, o);
      } catch (const std::runtime_error&) {
        continue;  // the metric occurs in no case (schema 1 sets have no wakeup-p999)
      }
      for (const CompareRow& row : cmp.rows)
        for (const CompareCell& c : row.cells)
          if (c.change_pct) {
            double& f = n.floor_pct[row.key][id];
            f = std::max(f, std::fabs(*c.change_pct));
          }
    }
  }
  return n;
}

nlohmann::json noise_json(const NoiseFloor& n) {
  nlohmann::json cases = nlohmann::json::object();
  for (const auto& [key, metrics] : n.floor_pct) cases[key] = metrics;
  return {{"schema", kNoiseSchema},
          {"schema_version", kNoiseSchemaVersion},
          {"what",
           "per case and metric: the largest change in percent between any two of the A/A "
           "result sets"},
          {"hostname", n.hostname},
          {"sets", n.sets},
          {"cases", cases}};
}

NoiseFloor load_noise(const std::string& path) {
  nlohmann::json doc;
  try {
    doc = parse_input_json(read_input_file("noise", path));
    check_texts(doc);  // compare prints its hostname and sets
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error("noise " + path + ": " + e.what());
  }
  NoiseFloor n = noise_from_json(doc, "noise " + path);
  n.path = path;
  return n;
}

NoiseFloor noise_from_json(const nlohmann::json& doc, const std::string& where) {
  const auto fail = [&](const std::string& what) -> void {
    throw std::runtime_error(where + ": " + what);
  };
  if (!doc.is_object() || doc.value("schema", nlohmann::json()) != kNoiseSchema)
    fail(std::string("not a noise file (expected \"schema\": \"") + kNoiseSchema +
         "\"; make one with wakebench noise A.json B.json --out FILE)");
  if (doc.value("schema_version", nlohmann::json()) != kNoiseSchemaVersion)
    fail("schema_version is not " + std::to_string(kNoiseSchemaVersion));
  if (!doc.contains("cases") || !doc["cases"].is_object()) fail("missing \"cases\" object");
  NoiseFloor n;
  n.path = where;
  if (doc.contains("hostname") && doc["hostname"].is_string()) n.hostname = doc["hostname"];
  if (doc.contains("sets") && doc["sets"].is_array())
    for (const auto& s : doc["sets"])
      if (s.is_string()) n.sets.push_back(s);
  for (const auto& [key, metrics] : doc["cases"].items()) {
    if (!metrics.is_object()) fail("cases[\"" + key + "\"] is not an object");
    for (const auto& [id, v] : metrics.items()) {
      if (!v.is_number() || v.get<double>() < 0)
        fail("cases[\"" + key + "\"]." + id + " is not a number >= 0");
      n.floor_pct[key][id] = v.get<double>();
    }
  }
  return n;
}

}  // namespace wb
