// libFuzzer target: the kernel-format CPU list parser (common/util/cpulist.h). Besides sanitizer
// reports, a finding is: an exception other than std::invalid_argument, an error message that is
// not one line naming the list, an unsorted or duplicate result, or a list that does not survive
// format_cpu_list -> parse_cpu_list unchanged.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "common/util/cpulist.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<int> cpus;
  try {
    cpus = wb::parse_cpu_list(text);
  } catch (const std::invalid_argument& e) {
    // Messages quote the list; lists with a newline quote it too, so only check the prefix.
    if (std::string_view(e.what()).rfind("invalid CPU list \"", 0) != 0)
      wb::fuzz::finding(std::string("error does not start with the list: ") + e.what());
    return 0;
  } catch (const std::exception& e) {
    wb::fuzz::finding(std::string("parse_cpu_list threw a non-invalid_argument: ") + e.what());
  }
  for (size_t i = 1; i < cpus.size(); ++i)
    if (cpus[i - 1] >= cpus[i]) wb::fuzz::finding("result not sorted and unique");
  for (int c : cpus)
    if (c < 0) wb::fuzz::finding("negative CPU id");
  const std::string formatted = wb::format_cpu_list(cpus);
  std::vector<int> again;
  try {
    again = wb::parse_cpu_list(formatted);
  } catch (const std::exception& e) {
    wb::fuzz::finding("format_cpu_list output \"" + formatted + "\" does not parse: " + e.what());
  }
  if (again != cpus) wb::fuzz::finding("round trip changed the list: \"" + formatted + "\"");
  return 0;
}
