// The kernel settings of an A/B run (`wakebench run --ab SPEC`, docs/cli.md#ab-runs,
// docs/result-set.md#ab): parsing SPECs and the run's schedule (pure), and the files' I/O under a
// root prefix (as common/system/kernel_files.h's readers take one, so tests point it at a fake
// tree). A SPEC names one knob and K >= 2 values:
//   feature:NAME=on,off[,...]         a sched feature (debugfs sched/features, or sched_features)
//   sysctl:kernel.sched_x=V1,V2[,...]  /proc/sys/kernel/sched_x
//   debugfs:sched/base_slice_ns=V1,... a file under the debugfs mount
// Several SPECs are zipped: setting k is the k-th value of each. Only the scheduler's own settings
// are taken unless the run says --ab-any-setting (registry/registry.json "scheduler_settings").
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace wb {

class RunJournal;  // common/system/journal.h

enum class SettingKind { kFeature, kSysctl, kDebugfs };

struct SettingSpec {
  std::string text;  // as given, for messages
  SettingKind kind = SettingKind::kSysctl;
  std::string name;                 // "TTWU_QUEUE", "kernel.sched_x", "sched/base_slice_ns"
  std::vector<std::string> values;  // as given; "on" / "off" for a feature
  std::string key() const;          // "feature:TTWU_QUEUE"
  // What the kernel's file takes for values[k], which is also what reads back: "TTWU_QUEUE" or
  // "NO_TTWU_QUEUE" for a feature, the value itself for a file.
  std::string token(std::size_t k) const;
};

// Throws std::invalid_argument("--ab SPEC: what is wrong"), one line.
SettingSpec parse_setting_spec(const std::string& text);
// The knob a key names ("sysctl:kernel.sched_x", SettingSpec::key()), without values. Throws
// std::invalid_argument when it names none.
SettingSpec setting_of_key(const std::string& key);

// Whether `s` is one of the scheduler's own settings (registry/registry.json).
bool is_scheduler_setting(const SettingSpec& s);
// Whether `token` is a value a run may write back into the knob `s` names (a journal's, which is
// input like any other): a feature's NAME or NO_NAME; else words of [A-Za-z0-9._:=/+-] joined
// by single spaces, as read_setting reads a file.
bool restorable_token(const SettingSpec& s, const std::string& token);

// Per setting, each SPEC's key with what was read back (or its value as given).
using SettingValues = std::vector<std::pair<std::string, std::string>>;

struct AbPlan {
  std::vector<SettingSpec> specs;
  int settings = 0;                   // K
  bool any_setting = false;           // --ab-any-setting: not only the scheduler's settings
  SettingValues values(int k) const;  // key -> value as given
  std::string label(int k) const;     // "TTWU_QUEUE=off,base_slice_ns=3000000"
};
// The SPECs zipped; every one must have the same K and name another knob, and, unless
// `any_setting`, one of the scheduler's own settings (Registry::scheduler_setting). Throws
// std::invalid_argument, one line naming the SPEC.
AbPlan parse_ab_plan(const std::vector<std::string>& texts, bool any_setting = false);

// One repetition of an A/B run: case `case_index`'s repetition of round `round` under setting
// `setting`.
struct AbStep {
  std::size_t case_index = 0;
  int round = 0;
  int setting = 0;
};
// The run's order (common/schema/run_order.h's interleaved_order of `repetitions` and `seed`,
// unchanged) with each entry run once under every setting, the settings in an order drawn per entry
// from a generator of its own seeded by `seed`. settings == 1: interleaved_order as it is.
std::vector<AbStep> ab_schedule(const std::vector<int>& repetitions, int settings, uint64_t seed);

// What one repetition under --ab records (docs/result-set.md#ab).
struct AbRepetition {
  int round = 0;
  SettingValues read_back;  // key -> the value read back before the repetition
};

// --- The files, under `root` ("/" or a fake tree) ---

// The machine path of the SPEC's file: "/proc/sys/kernel/sched_x", "/sys/kernel/debug/
// sched/features" (or .../sched_features when only that exists under root).
std::string setting_path(const SettingSpec& s, const std::string& root);
// The SPEC's knob as it reads now ("NO_TTWU_QUEUE", "3000000": whitespace runs made one space).
// Throws std::runtime_error naming the file.
std::string read_setting(const SettingSpec& s, const std::string& root);
// Writes `token` into the SPEC's file. Throws std::runtime_error("write PATH: Invalid argument").
void write_setting(const SettingSpec& s, const std::string& token, const std::string& root);

// Holds an A/B run's knobs: checks every SPEC against the files before anything runs, keeps
// their values, and writes every knob it changed back to that value when it is restored or goes
// away (normal end, exception; the run's signal handler only sets a flag, the run stops and this
// is destroyed in ordinary context). Only the process that made it restores: a forked child that
// unwinds does not. With a journal (which holds each knob's lock), each knob and its value are
// journalled before the first write, and marked there once restored.
class SettingsGuard {
 public:
  // Each SPEC's file exists and is writable, a feature is listed, and each value is taken on a
  // trial write (and reads back as written) followed by the value read before. Throws
  // std::invalid_argument("--ab SPEC: why"), one line, with every file as it was.
  SettingsGuard(AbPlan plan, std::string root, RunJournal* journal = nullptr);
  ~SettingsGuard() { restore(); }
  SettingsGuard(const SettingsGuard&) = delete;
  SettingsGuard& operator=(const SettingsGuard&) = delete;

  const AbPlan& plan() const { return plan_; }
  // Writes setting k and reads every knob back into `read_back`. Returns "" when each reads back
  // what was written, else why not (one line).
  std::string apply(int k, SettingValues* read_back);
  // Writes the value read before into every file changed since, and says so on stderr (what it
  // restored, or why it could not). Never throws.
  void restore() noexcept;

 private:
  void trial(std::size_t i);
  void write_back(std::size_t i);  // throws
  AbPlan plan_;
  std::string root_;
  std::vector<std::string> originals_;  // tokens, as read before
  std::vector<bool> changed_;
  std::vector<bool> lost_;  // could not be restored
  RunJournal* journal_;
  pid_t owner_;
};

}  // namespace wb
