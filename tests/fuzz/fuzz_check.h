// Shared by the libFuzzer targets: what counts as a finding beyond a sanitizer report.
// Each parser documents the one exception type its bad input raises (a one-line message naming
// the input and the place, docs/cli.md#cli); anything else escaping it (a JSON library
// type_error, std::out_of_range, ...) reaches the user as a message without the file and key, so
// the target aborts and libFuzzer keeps the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace wb::fuzz {

[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "wakebench fuzz finding: %s\n", what.c_str());
  std::abort();
}

// The documented error must name where the input came from. (Its being one line is not checked:
// messages quote the offending key or value as given, and JSON can spell a newline in a key.)
inline void check_message(const std::exception& e, const std::string& must_contain) {
  const std::string msg = e.what();
  if (msg.find(must_contain) == std::string::npos)
    finding("error does not name \"" + must_contain + "\": " + msg);
}

}  // namespace wb::fuzz
