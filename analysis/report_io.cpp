// write_report's I/O: the output folder, atomic writes of the files report_files computes, and
// gnuplot (found on PATH, spawned once per script).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "analysis/report.h"
#include "common/util/output_file.h"
#include "common/util/sys.h"

extern char** environ;

namespace wb {
namespace {

namespace fs = std::filesystem;

void create_out_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("report: cannot create " + dir + ": " + ec.message());
}

// Atomic: a reader never sees half a file (common/util/output_file.h).
void write_in(const std::string& dir, const ReportFile& file) {
  try {
    write_file_atomic((fs::path(dir) / file.name).string(), file.text);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("report: ") + e.what());
  }
}

void run_gnuplot(const std::string& gnuplot, const fs::path& dir, const std::string& script) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // Scripts name their files relative to their folder.
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  std::string arg0 = gnuplot, arg1 = script;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw std::runtime_error("report: cannot run " + gnuplot + ": " + std::strerror(rc));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      throw std::runtime_error("report: waitpid on gnuplot: " + std::string(std::strerror(errno)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("report: gnuplot " + (dir / script).string() + " " +
                             describe_wait_status(status));
  }
}

}  // namespace

std::optional<std::string> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::istringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) {
      return candidate.string();
    }
  }
  return std::nullopt;
}

ReportOutput write_report(const ResultSet& rs, const ReportOptions& options) {
  create_out_dir(options.out_dir);
  ReportOutput result;
  result.gnuplot =
      !options.gnuplot.empty() ? options.gnuplot : find_on_path("gnuplot").value_or("");
  result.render_command = "cd " + options.out_dir + " && for f in *.gp; do gnuplot \"$f\"; done";
  const ReportFiles report = report_files(rs, result.gnuplot.empty() ? result.render_command : "");
  for (const ReportFile& f : report.files) {
    write_in(options.out_dir, f);
    result.files.push_back(f.name);
  }
  for (const std::string& stem : report.plots) result.scripts.push_back(stem + ".gp");
  result.skipped = report.skipped;
  if (!result.gnuplot.empty()) {
    for (const std::string& stem : report.plots) {
      run_gnuplot(result.gnuplot, options.out_dir, stem + ".gp");
      result.images.push_back(stem + ".png");
      result.images.push_back(stem + ".svg");
    }
  }
  return result;
}

}  // namespace wb
