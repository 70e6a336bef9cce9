#include "common/system/settings.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <stdexcept>

#include "common/schema/registry.h"
#include "common/schema/run_order.h"
#include "common/system/journal.h"
#include "common/system/kernel_files.h"
#include "common/system/sched_features.h"
#include "common/util/text.h"

namespace wb {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& spec, const std::string& why) {
  throw std::invalid_argument("--ab " + spec + ": " + why);
}

bool made_of(const std::string& s, const char* extra) {
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && (c == '\0' || !std::strchr(extra, c)))
      return false;
  return !s.empty();
}

// A path of `sep`-separated components, each of [A-Za-z0-9_-] and `extra`, none "." or "..".
bool clean_path(const std::string& name, char sep, const char* extra) {
  for (const auto part : ktext::split(name, sep)) {
    const std::string p(part);
    if (!made_of(p, extra) || p == "." || p == "..") return false;
  }
  return true;
}

void check_spec_name(const SettingSpec& s) {
  switch (s.kind) {
    case SettingKind::kFeature:
      for (char c : s.name)
        if (!std::isupper(static_cast<unsigned char>(c)) &&
            !std::isdigit(static_cast<unsigned char>(c)) && c != '_')
          refuse(s.text, "\"" + s.name + "\" is not a sched feature name ([A-Z0-9_])");
      if (s.name.empty()) refuse(s.text, "no feature name");
      return;
    case SettingKind::kSysctl:
      if (!clean_path(s.name, '.', "_-"))
        refuse(s.text, "\"" + s.name + "\" is not a sysctl name (kernel.sched_x)");
      return;
    case SettingKind::kDebugfs:
      if (!clean_path(s.name, '/', "_-."))
        refuse(s.text, "\"" + s.name + "\" is not a path under debugfs (sched/base_slice_ns)");
      return;
  }
}

void check_value(const SettingSpec& s, const std::string& v) {
  if (v.empty()) refuse(s.text, "an empty value");
  if (s.kind == SettingKind::kFeature) {
    if (v != "on" && v != "off") refuse(s.text, "feature value \"" + v + "\" is not on or off");
  } else if (!made_of(v, "._:=/+-")) {
    refuse(s.text, "value \"" + v + "\" is not made of [A-Za-z0-9._:=/+-]");
  }
}

// Whitespace runs as one space, none at either end: "4\t4\t1\t7\n" reads "4 4 1 7".
std::string normalized(std::string_view text) {
  std::string out;
  for (const auto tok : ktext::split_ws(text)) out += (out.empty() ? "" : " ") + std::string(tok);
  return out;
}

bool is_debugfs(const SettingSpec& s) { return s.kind != SettingKind::kSysctl; }

const char* const kKinds[] = {"feature", "sysctl", "debugfs"};

// The kind and name of "KIND:NAME..." (`end`: where the name ends), checked; throws as refuse.
SettingSpec kind_and_name(const std::string& text, std::size_t colon, std::size_t end) {
  SettingSpec s;
  s.text = text;
  const std::string kind = text.substr(0, colon);
  const auto* k = std::find(std::begin(kKinds), std::end(kKinds), kind);
  if (k == std::end(kKinds))
    refuse(text, "unknown kind \"" + kind + "\" (feature, sysctl or debugfs)");
  s.kind = static_cast<SettingKind>(k - std::begin(kKinds));
  s.name = text.substr(colon + 1, end - colon - 1);
  check_spec_name(s);
  return s;
}

}  // namespace

bool is_scheduler_setting(const SettingSpec& s) {
  return registry().scheduler_setting(kKinds[static_cast<int>(s.kind)], s.name);
}

bool restorable_token(const SettingSpec& s, const std::string& token) {
  if (s.kind == SettingKind::kFeature) return token == s.name || token == "NO_" + s.name;
  return normalized(token) == token && made_of(token, "._:=/+- ");
}

namespace {

void check_scheduler_setting(const SettingSpec& s) {
  if (!is_scheduler_setting(s))
    refuse(s.text, s.name + " is not one of the scheduler's settings (" +
                       registry().scheduler_settings_text() +
                       "); --ab-any-setting switches any setting");
}

}  // namespace

std::string SettingSpec::key() const {
  return std::string(kKinds[static_cast<int>(kind)]) + ":" + name;
}

std::string SettingSpec::token(std::size_t k) const {
  if (kind == SettingKind::kFeature) return values.at(k) == "on" ? name : "NO_" + name;
  return values.at(k);
}

SettingSpec parse_setting_spec(const std::string& text) {
  const auto colon = text.find(':'), eq = text.find('=');
  if (colon == std::string::npos || eq == std::string::npos || eq < colon)
    refuse(text, "expected KIND:NAME=V1,V2[,...] (KIND feature, sysctl or debugfs)");
  SettingSpec s = kind_and_name(text, colon, eq);
  for (const auto v : ktext::split(std::string_view(text).substr(eq + 1), ',')) {
    s.values.emplace_back(v);
    check_value(s, s.values.back());
  }
  if (s.values.size() < 2)
    refuse(text, "1 value; an A/B needs 2 or more (equal values are an A/A)");
  return s;
}

SettingSpec setting_of_key(const std::string& key) {
  const auto colon = key.find(':');
  if (colon == std::string::npos) refuse(key, "not KIND:NAME");
  return kind_and_name(key, colon, key.size());
}

AbPlan parse_ab_plan(const std::vector<std::string>& texts, bool any_setting) {
  AbPlan plan;
  for (const std::string& t : texts) {
    SettingSpec s = parse_setting_spec(t);
    if (!any_setting) check_scheduler_setting(s);
    for (const SettingSpec& o : plan.specs) {
      if (o.key() == s.key()) refuse(t, "sets " + s.key() + ", as --ab " + o.text + " does");
      if (o.values.size() != s.values.size())
        refuse(t, std::to_string(s.values.size()) + " values, but --ab " + o.text + " has " +
                      std::to_string(o.values.size()) + " (zipped SPECs need as many each)");
    }
    plan.specs.push_back(std::move(s));
  }
  plan.settings = plan.specs.empty() ? 0 : static_cast<int>(plan.specs[0].values.size());
  plan.any_setting = any_setting;
  return plan;
}

SettingValues AbPlan::values(int k) const {
  SettingValues out;
  for (const SettingSpec& s : specs) out.emplace_back(s.key(), s.values.at(k));
  return out;
}

std::string AbPlan::label(int k) const {
  std::vector<std::string> parts;
  for (const SettingSpec& s : specs) {
    const std::string last = s.name.substr(s.name.find_last_of("./") + 1);
    parts.push_back(last + "=" + s.values.at(k));
  }
  return join(parts, ",");
}

std::vector<AbStep> ab_schedule(const std::vector<int>& repetitions, int settings, uint64_t seed) {
  // A stream of its own, so the cases' order stays interleaved_order's for the same seed.
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<int> round(repetitions.size(), 0);
  std::vector<AbStep> steps;
  for (std::size_t i : interleaved_order(repetitions, seed)) {
    std::vector<int> order(static_cast<std::size_t>(std::max(settings, 1)));
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t k = order.size(); k > 1; --k) std::swap(order[k - 1], order[rng() % k]);
    for (int k : order) steps.push_back({i, round[i], k});
    ++round[i];
  }
  return steps;
}

std::string setting_path(const SettingSpec& s, const std::string& root) {
  switch (s.kind) {
    case SettingKind::kFeature: {
      // sched/features since 5.13, sched_features before (common/system/sched_features.cpp).
      std::error_code ec;
      const std::string old = "/sys/kernel/debug/sched_features";
      if (!fs::exists(under_root(root, "/sys/kernel/debug/sched/features"), ec) &&
          fs::exists(under_root(root, old), ec))
        return old;
      return "/sys/kernel/debug/sched/features";
    }
    case SettingKind::kSysctl: {
      std::string rel = s.name;
      std::replace(rel.begin(), rel.end(), '.', '/');
      return "/proc/sys/" + rel;
    }
    case SettingKind::kDebugfs:
      return "/sys/kernel/debug/" + s.name;
  }
  return "";
}

std::string read_setting(const SettingSpec& s, const std::string& root) {
  const std::string path = setting_path(s, root);
  std::string why;
  const auto text = is_debugfs(s) ? read_debugfs_file(path, &why, root)
                                  : read_text_file(under_root(root, path), &why);
  if (!text) throw std::runtime_error(why);
  if (s.kind != SettingKind::kFeature) return normalized(*text);
  for (const SchedFeature& f : parse_sched_features(*text, under_root(root, path)))
    if (f.name == s.name) return f.enabled ? f.name : "NO_" + f.name;
  throw std::runtime_error("feature " + s.name + " is not listed in " + under_root(root, path));
}

void write_setting(const SettingSpec& s, const std::string& token, const std::string& root) {
  const std::string path = under_root(root, setting_path(s, root));
  // O_TRUNC: a fake tree's regular file then holds only what was written, as the kernel's does.
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("open " + path + ": " + std::strerror(errno));
  const std::string line = token + "\n";
  ssize_t n;
  do n = ::write(fd, line.data(), line.size());
  while (n < 0 && errno == EINTR);
  const int err = errno;
  const bool closed = ::close(fd) == 0;
  if (n < 0) throw std::runtime_error("write " + path + ": " + std::strerror(err));
  if (static_cast<std::size_t>(n) != line.size())
    throw std::runtime_error("write " + path + ": short write");
  if (!closed) throw std::runtime_error("close " + path + ": " + std::strerror(errno));
}

SettingsGuard::SettingsGuard(AbPlan plan, std::string root, RunJournal* journal)
    : plan_(std::move(plan)),
      root_(std::move(root)),
      changed_(plan_.specs.size(), false),
      lost_(plan_.specs.size(), false),
      journal_(journal),
      owner_(::getpid()) {
  try {
    for (const SettingSpec& s : plan_.specs) {
      const std::string path = under_root(root_, setting_path(s, root_));
      std::error_code ec;
      if (is_debugfs(s))
        if (const std::string why = debugfs_unavailable_reason(root_); !why.empty())
          refuse(s.text, why);
      if (!fs::exists(path, ec)) refuse(s.text, path + " does not exist");
      if (::access(path.c_str(), W_OK) != 0)
        refuse(s.text, path + " is not writable: " + std::strerror(errno));
      try {
        originals_.push_back(read_setting(s, root_));
      } catch (const std::runtime_error& e) {
        refuse(s.text, e.what());
      }
    }
    for (std::size_t i = 0; journal_ && i < plan_.specs.size(); ++i)
      journal_->record(plan_.specs[i].key(), originals_[i]);
    for (std::size_t i = 0; i < plan_.specs.size(); ++i) trial(i);
  } catch (...) {
    restore();  // a trial's value left behind when its write-back failed
    throw;
  }
}

// Each distinct value once: written, read back, and the value read before written again.
void SettingsGuard::trial(std::size_t i) {
  const SettingSpec& s = plan_.specs[i];
  std::vector<std::string> tried;
  for (std::size_t k = 0; k < s.values.size(); ++k) {
    const std::string token = s.token(k);
    if (std::find(tried.begin(), tried.end(), token) != tried.end()) continue;
    tried.push_back(token);
    std::string why;
    changed_[i] = true;
    try {
      write_setting(s, token, root_);
      if (const std::string got = read_setting(s, root_); got != normalized(token))
        why = "wrote " + token + ", read back " + got;
    } catch (const std::runtime_error& e) {
      why = "the kernel refuses " + s.values[k] + " (" + e.what() + ")";
    }
    write_back(i);
    if (!why.empty()) refuse(s.text, why);
  }
}

// A knob the kernel refused to change still holds its value: nothing is written then (a write
// the kernel refuses again would leave the journal's change unrestorable for ever).
void SettingsGuard::write_back(std::size_t i) {
  if (read_setting(plan_.specs[i], root_) != originals_[i])
    write_setting(plan_.specs[i], originals_[i], root_);
  changed_[i] = false;
}

std::string SettingsGuard::apply(int k, SettingValues* read_back) {
  read_back->clear();
  std::string why;
  for (std::size_t i = 0; i < plan_.specs.size(); ++i) {
    const SettingSpec& s = plan_.specs[i];
    const std::string token = s.token(static_cast<std::size_t>(k));
    std::string got;
    try {
      changed_[i] = true;
      write_setting(s, token, root_);
      got = read_setting(s, root_);
    } catch (const std::runtime_error& e) {
      if (why.empty()) why = "--ab " + s.text + ": " + e.what();
      continue;
    }
    read_back->emplace_back(s.key(), got);
    if (why.empty() && got != normalized(token))
      why = "--ab " + s.text + ": wrote " + token + ", read back " + got;
  }
  return why;
}

void SettingsGuard::restore() noexcept {
  if (::getpid() != owner_) return;
  std::vector<std::string> done;
  for (std::size_t i = 0; i < plan_.specs.size(); ++i) {
    const SettingSpec& s = plan_.specs[i];
    if (changed_[i]) {
      try {
        write_back(i);
        done.push_back(s.key() + " to " + originals_[i]);
      } catch (const std::exception& e) {
        changed_[i] = false;  // said once; the journal keeps it for the next run
        lost_[i] = true;
        std::fprintf(stderr, "wakebench: warning: could not restore %s to %s: %s\n",
                     s.key().c_str(), originals_[i].c_str(), e.what());
      }
    }
    if (journal_ && !lost_[i]) journal_->restored(s.key());
  }
  if (!done.empty()) std::fprintf(stderr, "wakebench: restored %s\n", join(done, ", ").c_str());
}

}  // namespace wb
