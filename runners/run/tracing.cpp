#include "runners/run/tracing.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "common/schema/placement.h"
#include "common/util/text.h"

namespace wb {
namespace {
constexpr const char* kExt = ".decisions.txt";
}  // namespace

std::unique_ptr<WakeupTraceSession> open_trace_session(Tracing tracing, RunJournal* journal,
                                                       RecorderChoice recorder) {
  if (tracing == Tracing::kNone) return nullptr;
  auto session =
      std::make_unique<WakeupTraceSession>(journal, tracing == Tracing::kDecisions, recorder);
  if (!session->decisions_unavailable().empty())
    std::fputs(wrap("wakebench: warning: " + session->decisions_unavailable(), "").c_str(), stderr);
  if (const std::string note = session->recorder_note(); !note.empty())
    std::fputs(wrap("wakebench: note: " + note, "").c_str(), stderr);
  return session;
}

DecisionSide::DecisionSide(const std::string& set_path, const std::string& stem,
                           const std::function<RunReplayer()>& replayer)
    : file_(set_path.empty() ? set_path
                             : std::filesystem::path(set_path).replace_extension(kExt).string(),
            stem, kExt) {
  add("# wakebench decision records (docs/policy-model.md#decision-records)\n");
  try {
    replayer_.emplace(replayer());
  } catch (const std::exception& e) {
    replay_error_ = e.what();
  }
}

void DecisionSide::add_run(const std::string& case_name, int64_t run, const std::string& records) {
  add("# case " + case_name + "\n# run " + std::to_string(run) + "\n");
  add(records);
  if (!replayer_) return;
  try {
    replayer_->add(case_name, records);
  } catch (const std::exception& e) {  // the run goes on; its predictions say why
    replay_error_ = e.what();
    replayer_.reset();
  }
}

CaseReplays DecisionSide::replays() const {
  if (!replayer_) throw std::invalid_argument(replay_error_);
  return replayer_->replays();
}

DecisionsRecord DecisionSide::publish() {
  return {std::filesystem::path(file_.publish()).filename().string(), sha_.hex(), lines_};
}

void DecisionSide::add(std::string_view text) {
  file_.append(text);
  sha_.update(text);
  lines_ += std::count(text.begin(), text.end(), '\n');
}

bool start_trace(const CaseTracer& tr, const CaseSpec& spec, std::string& error) {
  const int64_t streams = static_cast<int64_t>(std::max<size_t>(1, concurrent_pairs(spec).size()));
  const int64_t kb =
      WakeupTraceSession::buffer_kb_for((spec.round_trips + spec.warmup) * streams,
                                        static_cast<int>(spec.cpuset.size()), tr.decisions);
  try {
    if (tr.decisions) tr.session->set_case_wake(case_wake(spec.mechanism));
    tr.session->start(spec.cpuset, kb);
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

std::optional<WakeupTraceSummary> finish_trace(const CaseTracer& tr, std::string& error) {
  try {
    int64_t lost = 0;
    const std::string text = tr.session->stop(&lost);
    WakeupTraceOptions wo;
    wo.supervisor_pid = static_cast<int>(::syscall(SYS_gettid));
    wo.keep_decisions = tr.decisions;
    const Topology& topo = *tr.topo;
    wo.class_of = [&topo](int waker, int target) {
      return std::string(class_id(classify(topo, waker, target)));
    };
    WakeupTraceSummary s = attribute_wakeups(text, wo);
    s.lost += lost;
    s.traced_runs = 1;
    return s;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

std::chrono::nanoseconds trace_settle(std::chrono::nanoseconds work) {
  return std::max(work, std::chrono::nanoseconds(0)) + std::chrono::milliseconds(50);
}

nlohmann::ordered_json case_trace(const std::optional<WakeupTraceSummary>& trace,
                                  const std::string& error) {
  if (!trace || !error.empty())
    return {{"unavailable", error.empty() ? std::string("not traced") : error}};
  std::vector<std::string> classes;
  for (PlacementClass c : kAllClasses) classes.emplace_back(class_id(c));
  return trace_json(*trace, classes);
}

}  // namespace wb
