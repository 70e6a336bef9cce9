#include "runners/run/progress.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "common/schema/environment.h"
#include "common/schema/stats.h"
#include "common/util/text.h"
#include "runners/run/plan.h"

namespace wb {
namespace {

// printf into a string of any length.
[[gnu::format(printf, 1, 2)]] std::string printf_text(const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  std::string out(static_cast<size_t>(std::vsnprintf(nullptr, 0, format, args)), '\0');
  va_end(args);
  std::vsnprintf(out.data(), out.size() + 1, format, again);
  va_end(again);
  return out;
}

}  // namespace

std::string fmt_duration(double s) {
  // Capped at 100,000 hours: an ETA after one of 45 million shapes overflowed an int.
  const long long t = s > 0 ? static_cast<long long>(std::min(s, 3.6e8)) : 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld", t / 60, t % 60);
  return buf;
}

std::string eta_text(double elapsed_s, double done, double left) {
  if (done <= 0 || left <= 0) return {};
  return "  ETA " + fmt_duration(elapsed_s * left / done);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string announcement(const RunPlan& plan, const nlohmann::json& env) {
  const Topology& topo = plan.in.topo;
  std::string out = printf_text(
      "wakebench: %zu cases from %s on %s (%zu CPUs: %s), order seed %llu\n", plan.cases.size(),
      plan.in.config_path.c_str(), plan.host.c_str(), topo.cpus().size(), topo.source().c_str(),
      static_cast<unsigned long long>(plan.seed));
  for (int k = 0; k < plan.ab.settings; ++k)
    out += "wakebench: A/B setting " + std::to_string(k) + ": " + plan.ab.label(k) + "\n";
  for (const auto& w : environment_warnings(env)) out += wrap("warning: " + w, "");
  return out;
}

Progress::Progress(const std::vector<const CaseRecord*>& cases) {
  for (const CaseRecord* c : cases) {
    ++total_;
    if (c->spec.skip_reason.empty()) left_ += c->spec.round_trips * c->spec.repetitions;
  }
}

void Progress::repetition_done(const CaseSpec& s) {
  done_ += s.round_trips;
  left_ -= s.round_trips;
}

std::string Progress::case_done(const CaseRecord& r, const std::string& tag, double elapsed_s) {
  std::string what;
  if (r.status == CaseStatus::kOk) {
    std::vector<int64_t> all;
    for (const auto& rep : r.repetitions)
      for (const auto& p : rep) all.insert(all.end(), p.rtt_ns.begin(), p.rtt_ns.end());
    const SampleStats st = compute_stats(std::span<const int64_t>(all));
    what = printf_text("ok  median %6s us  p99 %6s us", us_figure(st.median).c_str(),
                       us_figure(st.p99).c_str());
  } else {
    what = std::string(status_id(r.status)) + ": " + r.reason;
    if (r.status == CaseStatus::kFailed)  // its repetitions not run
      left_ -=
          r.spec.round_trips * (r.spec.repetitions - static_cast<int64_t>(r.repetitions.size()));
  }
  const std::string eta =
      eta_text(elapsed_s, static_cast<double>(done_), static_cast<double>(left_));
  return printf_text("[%zu/%zu] %-40s %s%s\n", ++reported_, total_, (r.spec.name + tag).c_str(),
                     what.c_str(), eta.c_str());
}

std::string search_progress_line(std::int64_t done, std::int64_t total, double elapsed_s) {
  if (total == 0)
    return printf_text("search: finding the shapes (the topology's symmetries), %s spent\n",
                       fmt_duration(elapsed_s).c_str());
  return printf_text(
      "search: %lld/%lld shapes simulated, %s spent%s\n", static_cast<long long>(done),
      static_cast<long long>(total), fmt_duration(elapsed_s).c_str(),
      eta_text(elapsed_s, static_cast<double>(done), static_cast<double>(total - done)).c_str());
}

std::string look_line(const LookCounts& n, double elapsed_s, double budget_s, double next_s) {
  const std::string next = next_s < 0 ? "" : "; next look in about " + fmt_duration(next_s);
  return printf_text(
      "wakebench: look %zu of %zu (level %.4f): %d DIFFERENT, %d SAME, %d UNKNOWN; %zu go on; %s "
      "of %s spent%s\n",
      n.look, n.looks, n.level, n.different, n.same, n.unknown, n.go_on,
      fmt_duration(elapsed_s).c_str(), fmt_duration(budget_s).c_str(), next.c_str());
}

}  // namespace wb
