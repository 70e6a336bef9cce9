// Helpers every test file shares: reading files, and the project's shared fixtures
// (WB_SHARED_DIR: topologies and captures, part of the project, so a missing one fails the test).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "common/topology.h"

namespace wb::test {

// The whole file; "" when it cannot be opened (callers that need it use read_fixture).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The whole file, or std::runtime_error naming it.
inline std::string read_fixture(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open fixture " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A capture under ../shared/fixtures (/proc and /sys files of other machines).
inline std::string shared_fixture(const std::string& rel) {
  return std::string(WB_SHARED_DIR) + "/fixtures/" + rel;
}

// ../shared/topologies: the machines' hwloc XML files.
inline std::filesystem::path topologies_dir() {
  const std::filesystem::path dir = std::filesystem::path(WB_SHARED_DIR) / "topologies";
  if (!std::filesystem::is_directory(dir))
    throw std::runtime_error(dir.string() +
                             " is missing: the tests need the project's shared/ folder "
                             "(configure with -DWB_SHARED_DIR=...)");
  return dir;
}

// A machine of ../shared/topologies, by file name.
inline Topology shared_topology(const std::string& name) {
  return Topology::from_xml(topologies_dir() / name);
}

}  // namespace wb::test
