// The machine's A/A noise: how much a case's metrics change between runs of the same binary on the
// same idle machine. `wakebench noise A.json B.json [C.json...]` measures it from two or more such
// runs and writes a noise file; `wakebench compare --noise FILE` never calls DIFFERENT a change
// smaller than the case's floor there. `wakebench run --noise FILE` stores the floor in the result
// set, and compare uses the baseline set's stored floor when no --noise is given. The floor of a
// case and metric is the largest change between any two of the A/A sets (more sets: a surer floor).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/results/resultset_io.h"

namespace wb {

inline constexpr const char* kNoiseSchema = "wakebench-noise";
inline constexpr int kNoiseSchemaVersion = 1;

struct NoiseFloor {
  std::string path;               // the noise file, for messages ("" when built in memory)
  std::vector<std::string> sets;  // the A/A result sets it was measured from
  std::string hostname;           // the machine they ran on
  // CaseView::key() -> metric id -> the largest |change| in percent between two A/A sets.
  std::map<std::string, std::map<std::string, double>> floor_pct;

  std::optional<double> floor(const std::string& case_key, const std::string& metric) const;
};

// The metrics compare tests from per-repetition values, whose floors a noise file holds.
const std::vector<std::string>& noise_metrics();

// Fewer repetitions per case make a set's median one or the mean of two repetitions.
inline constexpr std::size_t kMinNoiseRepetitions = 3;

// Needs at least two sets of one machine (hostname) and one config (environment.config_hash), no
// set twice (the same document), and >= kMinNoiseRepetitions in every ok case; throws
// std::invalid_argument with one line naming the sets otherwise.
NoiseFloor measure_noise(const std::vector<ResultSet>& sets);

nlohmann::json noise_json(const NoiseFloor& n);
// Reads a noise file; one-line std::runtime_error ("noise FILE: ...") when it is not one.
NoiseFloor load_noise(const std::string& path);
// The same checks on a parsed document (a noise file, or the copy `wakebench run --noise FILE`
// keeps in a result set's "noise"); `where` prefixes the one-line error and becomes the path.
NoiseFloor noise_from_json(const nlohmann::json& doc, const std::string& where);

}  // namespace wb
