// write_report's I/O: the output folder (built beside its place and renamed into it whole),
// atomic writes of the files report_files computes, and gnuplot (found on PATH, spawned once per
// script, in the staged folder that only this process has written).
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "analysis/report/report.h"
#include "common/util/input.h"
#include "common/util/output_file.h"
#include "common/util/sys.h"

extern char** environ;

namespace wb {
namespace {

namespace fs = std::filesystem;

// ---- the folder, all or nothing -----------------------------------------------------------------

[[noreturn]] void refuse(const fs::path& path, const std::string& why) {
  throw std::runtime_error("report: " + path.string() + ": " + why);
}

// `out` as a folder's own name: "" and names ending in "." or ".." are refused, a trailing slash
// dropped.
fs::path out_folder(const std::string& out) {
  fs::path p = fs::path(out).lexically_normal();
  if (!p.empty() && !p.has_filename()) p = p.parent_path();
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..")
    throw std::runtime_error("report: --out \"" + out + "\" names no folder of its own");
  return p;
}

// `out` may be absent, an empty folder, or (with `replace`) a folder; nothing else.
void check_out_dir(const fs::path& out, bool replace) {
  struct stat st {};
  if (::lstat(out.c_str(), &st) != 0) {
    if (errno != ENOENT) refuse(out, std::strerror(errno));
    return;
  }
  if (!S_ISDIR(st.st_mode)) refuse(out, "is not a folder (refused)");
  std::error_code ec;
  if (!replace && !fs::is_empty(out, ec))
    refuse(out, ec ? ec.message() : "is not empty (--replace replaces it whole)");
}

// What a report killed with SIGKILL left beside `out`: its staged folders, named for a process
// that is gone.
void remove_orphans(const fs::path& parent, const std::string& prefix) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !e.is_directory(ec) || e.is_symlink(ec)) continue;
    const pid_t pid = static_cast<pid_t>(std::atoi(name.c_str() + prefix.size()));
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
  }
}

// A new folder beside `out` that the report is built in, renamed to `out` when it is complete
// (publish) and removed, with everything in it, when it is not: `out` is never half written.
class Staging {
 public:
  explicit Staging(const fs::path& out) : out_(out) {
    const fs::path parent = out.has_parent_path() ? out.parent_path() : ".";
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) refuse(parent, "cannot create it: " + ec.message());
    const std::string prefix = "." + out.filename().string() + ".wakebench-";
    remove_orphans(parent, prefix);
    for (int n = 0; path_.empty(); ++n) {
      const fs::path p = parent / (prefix + std::to_string(::getpid()) + "-" + std::to_string(n));
      if (::mkdir(p.c_str(), 0777) == 0)
        path_ = p;
      else if (errno != EEXIST || n >= 1000)
        refuse(p, std::string("cannot create it: ") + std::strerror(errno));
    }
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  ~Staging() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

  // The staged folder becomes `out`: by rename when `out` is absent or empty, else (`replace`
  // only) by exchange, the old folder then removed. A folder that filled while the report was
  // made is never replaced without `replace`: the report fails, nothing written.
  void publish(bool replace) {
    if (::rename(path_.c_str(), out_.c_str()) == 0) return path_.clear();
    if (errno != ENOTEMPTY && errno != EEXIST) refuse(out_, std::strerror(errno));
    if (!replace)
      refuse(out_,
             "was filled while the report was made (--replace replaces it whole): "
             "nothing written");
    if (::renameat2(AT_FDCWD, path_.c_str(), AT_FDCWD, out_.c_str(), RENAME_EXCHANGE) != 0)
      refuse(out_, std::string("cannot replace it: ") + std::strerror(errno));
    // path_ now names the old folder: the destructor removes it.
  }

 private:
  fs::path out_, path_;
};

// Atomic: a reader never sees half a file (common/util/output_file.h).
void write_in(const fs::path& dir, const ReportFile& file) {
  try {
    write_file_atomic((dir / file.name).string(), file.text);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("report: ") + e.what());
  }
}

// ---- signals and gnuplot ------------------------------------------------------------------------

volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int sig) { g_signal = sig; }

// While it lives, SIGINT, SIGTERM and SIGHUP are recorded instead of ending the process, so that
// the report can stop gnuplot and remove what it staged (check() throws).
class SignalGuard {
 public:
  SignalGuard() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;  // no SA_RESTART: waitpid returns EINTR
    sigemptyset(&sa.sa_mask);
    g_signal = 0;
    for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;
  ~SignalGuard() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  static void check() {
    if (g_signal != 0)
      throw std::runtime_error(std::string("report: interrupted by ") + sigabbrev_np(g_signal) +
                               ": nothing written");
  }

 private:
  static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

// Waits for gnuplot; on a signal to this process, stops it first (then SignalGuard::check throws).
int wait_gnuplot(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      throw std::runtime_error("report: waitpid on gnuplot: " + std::string(std::strerror(errno)));
    if (g_signal != 0) ::kill(pid, SIGKILL);
  }
  SignalGuard::check();
  return status;
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
  const int status = wait_gnuplot(pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("report: gnuplot " + script + " " + describe_wait_status(status));
  }
}

// gnuplot exits 0 when a full filesystem cut its output short: each image must be a regular file
// that ends as its format ends (PNG's IEND chunk, SVG's closing tag).
void check_image(const fs::path& dir, const std::string& name) {
  const fs::path path = dir / name;
  const std::string text = read_input_file("report: image", path.string());
  const bool png = path.extension() == ".png";
  const std::string_view end = png ? std::string_view("IEND\xae\x42\x60\x82", 8) : "</svg>";
  const std::size_t tail = std::min<std::size_t>(text.size(), 64);
  if (text.substr(text.size() - tail).find(end) == std::string::npos)
    throw std::runtime_error("report: gnuplot's " + name + " is " +
                             (text.empty() ? "empty" : "cut short") + " (a full filesystem?)");
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
  const fs::path out = out_folder(options.out_dir);
  check_out_dir(out, options.replace);
  ReportOutput result;
  result.gnuplot =
      !options.gnuplot.empty() ? options.gnuplot : find_on_path("gnuplot").value_or("");
  result.render_command = "cd " + options.out_dir + " && for f in *.gp; do gnuplot \"$f\"; done";
  const ReportFiles report = report_files(rs, result.gnuplot.empty() ? result.render_command : "");
  const SignalGuard signals;
  Staging staging(out);
  for (const ReportFile& f : report.files) {
    write_in(staging.path(), f);
    result.files.push_back(f.name);
    SignalGuard::check();
  }
  for (const std::string& stem : report.plots) result.scripts.push_back(stem + ".gp");
  result.skipped = report.skipped;
  if (!result.gnuplot.empty()) {
    for (const std::string& stem : report.plots) {
      run_gnuplot(result.gnuplot, staging.path(), stem + ".gp");
      for (const char* ext : {".png", ".svg"}) {
        check_image(staging.path(), stem + ext);
        result.images.push_back(stem + ext);
      }
    }
  }
  staging.publish(options.replace);
  return result;
}

}  // namespace wb
