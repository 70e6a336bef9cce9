// libFuzzer target: the result-set loader the analysis commands use (parse_result_set), then what
// compare and report derive from every loaded case (its view's key, format_params) and the machine
// summary. Besides sanitizer reports, a finding is an exception other than
// std::runtime_error from the loader, an error not naming the file ("results fuzz.json: ..."), or
// an exception from the helpers on a set the loader accepted (it validated those fields).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "analysis/results/resultset_io.h"
#include "fuzz_check.h"

namespace {
const std::string kPath = "fuzz.json";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  wb::ResultSet rs;
  try {
    rs = wb::parse_result_set(text, kPath);
  } catch (const std::runtime_error& e) {
    wb::fuzz::check_message(e, "results " + kPath + ": ");
    return 0;
  } catch (const std::exception& e) {
    wb::fuzz::finding(std::string("result-set loader threw an undocumented exception: ") +
                      e.what());
  }
  try {
    (void)wb::format_counts(rs.machine);
    for (const auto& c : rs.views) {
      (void)c.key();
      (void)wb::format_params(c.params_json);
    }
  } catch (const std::exception& e) {
    wb::fuzz::finding(std::string("a loaded result set broke a helper: ") + e.what());
  }
  return 0;
}
