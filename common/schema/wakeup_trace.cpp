#include "common/schema/wakeup_trace.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "common/schema/stats.h"
#include "common/util/input.h"
#include "common/util/text.h"

namespace wb {

namespace {

// ---- parsing ---------------------------------------------------------------------------------

// The integer value of " key=" (searched from the right, so a comm holding spaces cannot shift
// it) up to the next space. nullopt when absent or not a number.
std::optional<int64_t> int_field(std::string_view fields, std::string_view key) {
  const std::string pat = " " + std::string(key) + "=";
  size_t at = fields.rfind(pat);
  size_t start;
  if (at == std::string_view::npos) {
    if (fields.substr(0, key.size() + 1) != std::string(key) + "=") return std::nullopt;
    start = key.size() + 1;
  } else {
    start = at + pat.size();
  }
  size_t end = fields.find(' ', start);
  int64_t v;
  if (!parse_int(fields.substr(start, end == std::string_view::npos ? end : end - start), v))
    return std::nullopt;
  return v;
}

std::optional<std::string_view> str_field(std::string_view fields, std::string_view key) {
  const std::string pat = " " + std::string(key) + "=";
  size_t at = fields.rfind(pat);
  if (at == std::string_view::npos) return std::nullopt;
  size_t start = at + pat.size();
  size_t end = fields.find(' ', start);
  return fields.substr(start, end == std::string_view::npos ? end : end - start);
}

struct Line {
  int pid = 0;  // the running task (waker of sched_waking)
  int cpu = -1;
  int64_t ts_ns = 0;
  std::string_view event, fields;
};

// "<comm>-<pid> [(<tgid>)] [<cpu>] [<irq flags>] <sec>.<usec>: <event>: <fields>"
std::optional<std::string> parse_line(std::string_view s, Line& out) {
  // The CPU field: the first " [digits]" (a comm holding such text would be odd).
  size_t lb = std::string_view::npos;
  for (size_t i = s.find(" ["); i != std::string_view::npos; i = s.find(" [", i + 1)) {
    size_t j = i + 2;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    if (j > i + 2 && j < s.size() && s[j] == ']') {
      lb = i;
      break;
    }
  }
  if (lb == std::string_view::npos) return "no [CPU] field";
  std::string_view task = trim(s.substr(0, lb));
  if (!task.empty() && task.back() == ')') {  // record-tgid's "(  tgid)"
    size_t open = task.rfind('(');
    if (open == std::string_view::npos) return "unbalanced tgid field";
    task = trim(task.substr(0, open));
  }
  size_t dash = task.rfind('-');
  int64_t v;
  if (dash == std::string_view::npos || !parse_int(task.substr(dash + 1), v))
    return "no <comm>-<pid>";
  out.pid = static_cast<int>(v);
  size_t rb = s.find(']', lb);
  if (!parse_int(s.substr(lb + 2, rb - lb - 2), v)) return "bad CPU";
  out.cpu = static_cast<int>(v);
  std::string_view rest = trim(s.substr(rb + 1));
  // Optional irq-info flags, then the timestamp "sec.usec:".
  for (int k = 0; k < 2; ++k) {
    size_t sp = rest.find(' ');
    std::string_view tok = rest.substr(0, sp);
    if (!tok.empty() && tok.back() == ':' && tok.find('.') != std::string_view::npos) {
      tok.remove_suffix(1);
      size_t dot = tok.find('.');
      int64_t sec, usec;
      std::string_view frac = tok.substr(dot + 1);
      if (!parse_int(tok.substr(0, dot), sec) || !parse_int(frac, usec) || frac.size() > 9)
        return "bad timestamp";
      for (size_t d = frac.size(); d < 9; ++d) usec *= 10;
      out.ts_ns = sec * 1'000'000'000 + usec;
      rest = sp == std::string_view::npos ? std::string_view() : trim(rest.substr(sp + 1));
      size_t colon = rest.find(": ");
      if (colon == std::string_view::npos) {
        if (!rest.empty() && rest.back() == ':') {
          out.event = rest.substr(0, rest.size() - 1);
          out.fields = {};
          return std::nullopt;
        }
        return "no event name";
      }
      out.event = rest.substr(0, colon);
      out.fields = rest.substr(colon + 2);
      return std::nullopt;
    }
    if (sp == std::string_view::npos || k == 1) break;
    rest = trim(rest.substr(sp + 1));
  }
  return "no timestamp";
}

// A line the attribution cannot read, saying why; attribute_wakeups adds which line it is.
struct BadLine : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Calls `f` on every line of `text`, trimmed, but blank lines and '#' comments. A BadLine from `f`
// becomes std::invalid_argument "trace line N: <why>: "<the line, cut at 100 bytes, escaped>"".
template <class F>
void for_each_trace_line(std::string_view text, F&& f) {
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t nl = text.find('\n', pos);
    const std::string_view s = trim(text.substr(pos, nl == std::string_view::npos ? nl : nl - pos));
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (s.empty() || s.front() == '#') continue;
    try {
      f(s);
    } catch (const BadLine& e) {
      throw std::invalid_argument("trace line " + std::to_string(line_no) + ": " + e.what() + ": " +
                                  quoted_line(s));
    }
  }
}

// `s` with '?' for each control character (a task name may hold any), as the side file keeps it:
// replay refuses a line with one.
std::string without_controls(std::string_view s) {
  std::string out(s);
  for (std::size_t at; (at = control_at(out)) != std::string::npos;)
    out.replace(at, out[at] == '\xC2' ? 2 : 1, "?");
  return out;
}

// "CPU:N [LOST M EVENTS]": M, the events the kernel lost there; nullopt for any other line.
std::optional<int64_t> lost_events(std::string_view s) {
  if (s.rfind("CPU:", 0) != 0 || s.find("[LOST ") == std::string_view::npos) return std::nullopt;
  const size_t a = s.find("[LOST ") + 6, b = s.find(' ', a);
  int64_t n = 0;
  if (b == std::string_view::npos || !parse_int(s.substr(a, b - a), n))
    throw BadLine("bad LOST line");
  return n;
}

// ---- the events ------------------------------------------------------------------------------

// The five events, their fields read. The running task and its CPU are the Line's.
struct Fork {
  int parent = 0, child = 0;
};
struct Waking {
  int wakee = 0;
  int prev_cpu = -1;  // its target_cpu field: task_cpu(p) before selection
};
struct Migrate {
  int pid = 0;
};
struct Switch {
  int prev = 0;
  bool prev_runnable = false;  // switched out with state R/R+ (preempted), not blocking
  int next = 0;
};
struct Wakeup {
  int wakee = 0, target_cpu = -1;
};
using Event = std::variant<std::monostate, Fork, Waking, Migrate, Switch, Wakeup>;

int need_int(std::string_view fields, std::string_view event, const char* key) {
  const std::optional<int64_t> v = int_field(fields, key);
  if (!v) throw BadLine(std::string(event) + ": no integer " + key + "=");
  return static_cast<int>(*v);
}

Switch read_switch(std::string_view fields) {
  const size_t arrow = fields.find(" ==> ");
  if (arrow == std::string_view::npos) throw BadLine("sched_switch: no \" ==> \"");
  const std::string_view left = fields.substr(0, arrow);
  const std::string right = " " + std::string(fields.substr(arrow + 5));
  const int prev = need_int(left, "sched_switch", "prev_pid");
  const auto state = str_field(left, "prev_state");
  if (!state || state->empty()) throw BadLine("sched_switch: no prev_state=");
  return {prev, state->front() == 'R', need_int(right, "sched_switch", "next_pid")};
}

// The event of a line with its fields; monostate for the events the attribution does not use.
Event read_event(const Line& l) {
  const std::string_view ev = l.event, f = l.fields;
  // The parent is the running task (a child_comm could hold " pid=" and fool the field).
  if (ev == "sched_process_fork") return Fork{l.pid, need_int(f, ev, "child_pid")};
  if (ev == "sched_waking") return Waking{need_int(f, ev, "pid"), need_int(f, ev, "target_cpu")};
  if (ev == "sched_migrate_task") {
    const int pid = need_int(f, ev, "pid");
    need_int(f, ev, "dest_cpu");
    return Migrate{pid};
  }
  if (ev == "sched_switch") return read_switch(f);
  if (ev == "sched_wakeup") return Wakeup{need_int(f, ev, "pid"), need_int(f, ev, "target_cpu")};
  return std::monostate{};
}

// ---- the attribution -------------------------------------------------------------------------

enum class RunState { kUnknown, kRunning, kQueued, kBlocked };

struct TaskState {
  RunState st = RunState::kUnknown;
  int64_t blocked_at = -1;  // last blocking switch-out
};
using TaskStates = std::unordered_map<int, TaskState>;  // case task -> what the trace last showed

// A sched_waking of a case task waiting for its sched_wakeup: the wakee's state when woken, and
// what came between.
struct Pending {
  int waker = 0, waker_cpu = -1, prev = -1;
  int64_t ts = 0;
  RunState st = RunState::kUnknown;
  int64_t blocked_at = -1;
  bool migrated = false, blocked_after = false;
  bool counted = false;  // woken by another case task
};
using PendingWakes = std::unordered_map<int, Pending>;  // wakee -> its pending waking

// The case tasks: the supervisor's descendants (sched_process_fork), the supervisor excluded.
class CaseTasks {
 public:
  explicit CaseTasks(int supervisor) : supervisor_(supervisor), family_{supervisor} {}
  void fork(int parent, int child) {
    if (family_.count(parent)) family_.insert(child);
  }
  bool contains(int pid) const { return pid != supervisor_ && family_.count(pid) > 0; }

 private:
  int supervisor_;
  std::unordered_set<int> family_;  // the supervisor and its descendants
};

// sched_waking of a case task: the wakee's state, kept until its sched_wakeup. A counted waking
// still pending never got its sched_wakeup.
void on_waking(const Line& l, const Waking& e, const CaseTasks& cases, const TaskStates& tasks,
               PendingWakes& pending, WakeupTraceSummary& sum) {
  if (!cases.contains(e.wakee)) return;
  if (auto it = pending.find(e.wakee); it != pending.end() && it->second.counted) ++sum.unmatched;
  const auto t = tasks.find(e.wakee);
  const TaskState was = t == tasks.end() ? TaskState{} : t->second;
  pending[e.wakee] = {.waker = l.pid,
                      .waker_cpu = l.cpu,
                      .prev = e.prev_cpu,
                      .ts = l.ts_ns,
                      .st = was.st,
                      .blocked_at = was.blocked_at,
                      .counted = cases.contains(l.pid) && l.pid != e.wakee};
}

// sched_migrate_task of a case task: inside a wakeup, or another (load balancing, affinity).
void on_migrate(const Migrate& e, const CaseTasks& cases, PendingWakes& pending,
                WakeupTraceSummary& sum) {
  if (!cases.contains(e.pid)) return;
  if (auto it = pending.find(e.pid); it != pending.end()) {
    it->second.migrated = true;
    ++sum.migrations_at_wakeup;
  } else {
    ++sum.migrations_other;
  }
}

// sched_switch at ts_ns: the case task switched out is queued (preempted) or blocked, the one
// switched in runs. A waker stacked with its wakee that is switched out runnable was preempted.
void on_switch(int64_t ts_ns, const Switch& e, const CaseTasks& cases, TaskStates& tasks,
               PendingWakes& pending, std::unordered_set<int>& stacked_wakers,
               WakeupTraceSummary& sum) {
  if (stacked_wakers.erase(e.prev) && e.prev_runnable) ++sum.stacked_waker_preempted;
  if (cases.contains(e.prev)) {
    TaskState& t = tasks[e.prev];
    if (e.prev_runnable) {
      t.st = RunState::kQueued;
    } else {
      t.st = RunState::kBlocked;
      t.blocked_at = ts_ns;
      if (auto it = pending.find(e.prev); it != pending.end()) it->second.blocked_after = true;
    }
  }
  if (cases.contains(e.next)) tasks[e.next].st = RunState::kRunning;
}

// The path that placed a wakeup (the header's Attribution); `remote`: sched_wakeup emitted on a
// CPU other than the waker's.
const char* wakeup_path(const Pending& w, int target, bool remote, int64_t on_cpu_window_ns) {
  const bool queued = w.st == RunState::kRunning || w.st == RunState::kQueued;
  const bool switching_out = w.blocked_after || (w.st == RunState::kBlocked && w.blocked_at >= 0 &&
                                                 w.ts - w.blocked_at <= on_cpu_window_ns);
  if (!w.migrated && queued && !w.blocked_after) return kPathTtwuRunnable;
  if (!w.migrated && target == w.prev && remote && switching_out) return kPathQueuedRemote;
  return kPathSelection;
}

// The placement class of `target` seen from `waker_cpu`; "unknown" when class_of cannot tell.
std::string placement_class(const WakeupTraceOptions& opt, int waker_cpu, int target) {
  if (!opt.class_of) return "unknown";
  try {
    return opt.class_of(waker_cpu, target);
  } catch (const std::exception&) {
    return "unknown";
  }
}

// Counts the wakeup of e.wakee by another case task (w), its sched_wakeup on wakeup_cpu.
void count_wakeup(const Pending& w, const Wakeup& e, int wakeup_cpu, const WakeupTraceOptions& opt,
                  bool keep_list, WakeupTraceSummary& sum) {
  const int target = e.target_cpu;
  const bool remote = wakeup_cpu != w.waker_cpu;
  const std::string path = wakeup_path(w, target, remote, opt.on_cpu_window_ns);
  const std::string cls = placement_class(opt, w.waker_cpu, target);
  ++sum.wakeups;
  ++sum.paths[path];
  ++sum.classes_by_path[path][cls];
  if (target != w.prev) {
    ++sum.moved;
    ++sum.moved_by_class[cls];
    if (sum.first_moves.size() < kFirstMovesPerRun)
      sum.first_moves.push_back({.wake = sum.wakeups - 1,
                                 .waker_cpu = w.waker_cpu,
                                 .prev_cpu = w.prev,
                                 .target_cpu = target,
                                 .path = path});
  }
  sum.stacked_wakes += target == w.waker_cpu;
  if (w.st == RunState::kBlocked && w.blocked_at >= 0 && w.ts >= w.blocked_at)
    (target != w.prev ? sum.since_switch_out_moved : sum.since_switch_out_kept)
        .push_back(w.ts - w.blocked_at);
  sum.remote_delivery += remote;
  if (keep_list)
    sum.list.push_back({.waker_pid = w.waker,
                        .wakee_pid = e.wakee,
                        .waker_cpu = w.waker_cpu,
                        .prev_cpu = w.prev,
                        .target_cpu = target,
                        .wakeup_cpu = wakeup_cpu,
                        .path = path,
                        .cls = cls});
}

// sched_wakeup of a case task: its pending waking is counted, as a wakeup by another case task
// or by a foreign one (neither a case task nor the supervisor).
void on_wakeup(const Line& l, const Wakeup& e, const WakeupTraceOptions& opt, bool keep_list,
               const CaseTasks& cases, TaskStates& tasks, PendingWakes& pending,
               std::unordered_set<int>& stacked_wakers, WakeupTraceSummary& sum) {
  if (!cases.contains(e.wakee)) return;
  const auto it = pending.find(e.wakee);
  if (it == pending.end()) {
    ++sum.unmatched;
    return;
  }
  const Pending w = it->second;
  pending.erase(it);
  tasks[e.wakee].st = RunState::kQueued;
  if (w.counted) {
    count_wakeup(w, e, l.cpu, opt, keep_list, sum);
    if (e.target_cpu == w.waker_cpu) stacked_wakers.insert(w.waker);
  } else if (w.waker != opt.supervisor_pid && !cases.contains(w.waker)) {
    ++sum.foreign_wakeups;
    sum.foreign_moved += e.target_cpu != w.prev;
  }
}

}  // namespace

void WakeupTraceSummary::add(const WakeupTraceSummary& o) {
  wakeups += o.wakeups;
  for (const auto& [p, n] : o.paths) paths[p] += n;
  for (const auto& [p, m] : o.classes_by_path)
    for (const auto& [c, n] : m) classes_by_path[p][c] += n;
  moved += o.moved;
  for (const auto& [c, n] : o.moved_by_class) moved_by_class[c] += n;
  foreign_wakeups += o.foreign_wakeups;
  foreign_moved += o.foreign_moved;
  stacked_wakes += o.stacked_wakes;
  stacked_waker_preempted += o.stacked_waker_preempted;
  since_switch_out_kept.insert(since_switch_out_kept.end(), o.since_switch_out_kept.begin(),
                               o.since_switch_out_kept.end());
  since_switch_out_moved.insert(since_switch_out_moved.end(), o.since_switch_out_moved.begin(),
                                o.since_switch_out_moved.end());
  remote_delivery += o.remote_delivery;
  migrations_at_wakeup += o.migrations_at_wakeup;
  migrations_other += o.migrations_other;
  unmatched += o.unmatched;
  lost += o.lost;
  events += o.events;
  for (TracedMove m : o.first_moves) {
    if (first_moves.size() >= kFirstMovesMax) break;
    m.run += traced_runs;
    first_moves.push_back(m);
  }
  traced_runs += o.traced_runs;
}

bool is_self_waking(std::string_view line) {
  Line l;
  if (parse_line(trim(line), l) || l.event != "sched_waking") return false;
  const std::optional<int64_t> wakee = int_field(l.fields, "pid");
  return wakee && *wakee == l.pid;
}

std::string merge_trace_lines(std::string_view text, const std::vector<std::string>& lines) {
  const auto ts_of = [](std::string_view s) -> std::optional<int64_t> {
    Line l;
    if (parse_line(trim(s), l)) return std::nullopt;
    return l.ts_ns;
  };
  std::vector<int64_t> line_ts;  // each of `lines` parsed once, not once per text line
  for (const std::string& l : lines) line_ts.push_back(ts_of(l).value_or(0));
  std::string out;
  std::size_t next = 0;  // the first of `lines` not yet written
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = std::min(text.find('\n', pos), text.size());
    const std::string_view s = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (const auto ts = ts_of(s))
      for (; next < lines.size() && line_ts[next] < *ts; ++next)
        out.append(lines[next]).push_back('\n');
    out.append(s).push_back('\n');
  }
  for (; next < lines.size(); ++next) out.append(lines[next]).push_back('\n');
  return out;
}

WakeupTraceSummary attribute_wakeups(std::string_view text, const WakeupTraceOptions& opt,
                                     bool keep_list) {
  WakeupTraceSummary sum;
  for (const char* p : {kPathSelection, kPathTtwuRunnable, kPathQueuedRemote}) sum.paths[p] = 0;
  CaseTasks cases(opt.supervisor_pid);
  TaskStates tasks;
  PendingWakes pending;
  std::unordered_set<int> stacked_wakers;  // woke their partner onto their own CPU, not yet out
  for_each_trace_line(text, [&](std::string_view s) {
    if (const std::optional<int64_t> lost = lost_events(s)) {
      sum.lost += *lost;
      return;
    }
    Line l;
    if (auto why = parse_line(s, l)) throw BadLine(*why);
    ++sum.events;
    if (opt.keep_decisions && (l.event == "sched_waking" || l.event == "sched_wake_decision"))
      if (const auto wakee = int_field(l.fields, "pid"); wakee && cases.contains(int(*wakee)))
        sum.decisions.append(without_controls(s)).push_back('\n');
    const Event e = read_event(l);
    if (const auto* forked = std::get_if<Fork>(&e))
      cases.fork(forked->parent, forked->child);
    else if (const auto* waking = std::get_if<Waking>(&e))
      on_waking(l, *waking, cases, tasks, pending, sum);
    else if (const auto* migrate = std::get_if<Migrate>(&e))
      on_migrate(*migrate, cases, pending, sum);
    else if (const auto* sw = std::get_if<Switch>(&e))
      on_switch(l.ts_ns, *sw, cases, tasks, pending, stacked_wakers, sum);
    else if (const auto* wakeup = std::get_if<Wakeup>(&e))
      on_wakeup(l, *wakeup, opt, keep_list, cases, tasks, pending, stacked_wakers, sum);
  });
  for (const auto& [p, w] : pending) sum.unmatched += w.counted;
  return sum;
}

namespace {

nlohmann::ordered_json first_moves_json(const std::vector<TracedMove>& moves) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const TracedMove& m : moves)
    out.push_back({{"run", m.run},
                   {"wake", m.wake},
                   {"waker_cpu", m.waker_cpu},
                   {"from", m.prev_cpu},
                   {"to", m.target_cpu},
                   {"path", m.path}});
  return out;
}

}  // namespace

nlohmann::ordered_json trace_json(const WakeupTraceSummary& s,
                                  const std::vector<std::string>& classes) {
  nlohmann::ordered_json paths = nlohmann::ordered_json::object();
  nlohmann::ordered_json by = nlohmann::ordered_json::object();
  for (const char* p : {kPathSelection, kPathTtwuRunnable, kPathQueuedRemote}) {
    auto it = s.paths.find(p);
    paths[p] = it == s.paths.end() ? 0 : it->second;
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    auto cit = s.classes_by_path.find(p);
    for (const auto& c : classes) {
      int64_t n = 0;
      if (cit != s.classes_by_path.end())
        if (auto k = cit->second.find(c); k != cit->second.end()) n = k->second;
      m[c] = n;
    }
    if (cit != s.classes_by_path.end())
      for (const auto& [c, n] : cit->second)
        if (std::find(classes.begin(), classes.end(), c) == classes.end()) m[c] = n;
    by[p] = m;
  }
  nlohmann::ordered_json moved = nlohmann::ordered_json::object();
  for (const auto& c : classes)
    if (auto it = s.moved_by_class.find(c); it != s.moved_by_class.end()) moved[c] = it->second;
  for (const auto& [c, n] : s.moved_by_class)
    if (std::find(classes.begin(), classes.end(), c) == classes.end()) moved[c] = n;
  auto percentiles = [](const std::vector<int64_t>& ns) {
    nlohmann::ordered_json j = {{"n", ns.size()}};
    if (ns.empty()) return j;
    std::vector<double> us(ns.begin(), ns.end());
    for (double& x : us) x /= 1000.0;
    std::sort(us.begin(), us.end());
    for (auto [key, q] : {std::pair{"p5", 0.05}, {"p50", 0.5}, {"p95", 0.95}})
      j[key] = percentile_sorted(us, q);
    return j;
  };
  return {{"wakeups", s.wakeups},
          {"paths", paths},
          {"classes_by_path", by},
          {"moved", s.moved},
          {"moved_by_class", moved},
          {"foreign", {{"wakeups", s.foreign_wakeups}, {"moved", s.foreign_moved}}},
          {"stacked", {{"wakes", s.stacked_wakes}, {"waker_preempted", s.stacked_waker_preempted}}},
          {"since_switch_out_us",
           {{"kept", percentiles(s.since_switch_out_kept)},
            {"moved", percentiles(s.since_switch_out_moved)}}},
          {"remote_delivery", s.remote_delivery},
          {"migrations", {{"at_wakeup", s.migrations_at_wakeup}, {"other", s.migrations_other}}},
          {"unmatched", s.unmatched},
          {"dropped", s.lost},
          {"events", s.events},
          {"runs", s.traced_runs},
          {"first_moves", first_moves_json(s.first_moves)}};
}

}  // namespace wb
