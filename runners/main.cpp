// wakebench: measure what a Linux wakeup costs, per mechanism and placement class, and check
// scheduler wakeup policies against those costs. See README.md and docs/.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>

#include "runners/commands.h"

namespace wb {

std::vector<Command>& registered_commands() {
  static std::vector<Command> commands;
  return commands;
}

CommandRegistrar::CommandRegistrar(std::string name, AddCommand add) {
  registered_commands().push_back({std::move(name), std::move(add)});
}

}  // namespace wb

int main(int argc, char** argv) {
  CLI::App app{"wakebench: what a Linux wakeup costs, per mechanism and placement class"};
  app.require_subcommand(1);
  auto& commands = wb::registered_commands();
  std::sort(commands.begin(), commands.end(),
            [](const wb::Command& a, const wb::Command& b) { return a.name < b.name; });
  for (auto& c : commands) c.add(app);
  std::vector<std::string> args = wb::mark_side_breaks(argc, argv);
  std::vector<char*> marked;
  for (std::string& a : args) marked.push_back(a.data());
  try {
    app.parse(argc, marked.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "wakebench: %s\n", e.what());
    return 2;
  } catch (const wb::ExitCode& e) {
    return e.code;
  } catch (const std::bad_alloc&) {
    // Inputs are bounded (WAKEBENCH_MAX_INPUT_MIB), but a raised limit or a small ulimit -v can
    // still run out: one line, as for any error.
    std::fputs("wakebench: out of memory (an input too large for this machine?)\n", stderr);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wakebench: %s\n", e.what());
    return 2;
  }
  return 0;
}
