// Subcommand registration for the wakebench CLI. Each runners/cmd_*.cpp adds its subcommand with
// one line at namespace scope, the registrar named after its command (a unity build compiles
// several runners/cmd_*.cpp as one file, CMakeLists.txt):
//   static wb::CommandRegistrar topology_reg("topology", add_topology_command);
// main() builds the CLI11 app from every registrar (sorted by name) and runs it.
//
// Error convention: a subcommand throws any std::exception whose what() is one line saying what is
// wrong and where (file, key, position); main prints "wakebench: <what()>" to stderr and exits 2.
// A subcommand's own non-zero result (e.g. an incomplete run) is returned through CLI11's callback
// by throwing wb::ExitCode.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace wb {

using AddCommand = std::function<void(CLI::App& app)>;

struct CommandRegistrar {
  CommandRegistrar(std::string name, AddCommand add);
};

struct Command {
  std::string name;
  AddCommand add;
};
std::vector<Command>& registered_commands();

// `wakebench compare A1 A2 -- B1 B2`: CLI11 takes a lone "--" for the end of options and drops
// it, so main() hands compare's on as this word (mark_side_breaks), at which compare splits its
// sides (runners/cmd_compare.cpp). Other commands' arguments are left alone.
inline constexpr const char* kSideBreak = "\x1f--";
std::vector<std::string> mark_side_breaks(int argc, char** argv);

// Thrown by a subcommand to exit with a given status after it has printed what it wanted.
struct ExitCode {
  int code;
};

}  // namespace wb
