#include "common/wakeup_trace.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "common/stats.h"
#include "common/text.h"

namespace wb {

namespace {

// ---- parsing ---------------------------------------------------------------------------------

bool to_int(std::string_view s, int64_t& v) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

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
  if (!to_int(fields.substr(start, end == std::string_view::npos ? end : end - start), v))
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
  if (dash == std::string_view::npos || !to_int(task.substr(dash + 1), v)) return "no <comm>-<pid>";
  out.pid = static_cast<int>(v);
  size_t rb = s.find(']', lb);
  if (!to_int(s.substr(lb + 2, rb - lb - 2), v)) return "bad CPU";
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
      if (!to_int(tok.substr(0, dot), sec) || !to_int(frac, usec) || frac.size() > 9)
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

enum class RunState { kUnknown, kRunning, kQueued, kBlocked };

struct TaskState {
  RunState st = RunState::kUnknown;
  int64_t blocked_at = -1;  // last blocking switch-out
};

struct Pending {
  int waker = 0, waker_cpu = -1, prev = -1;
  int64_t ts = 0;
  RunState st = RunState::kUnknown;
  int64_t blocked_at = -1;
  bool migrated = false, blocked_after = false, counted = false;
};

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

WakeupTraceSummary attribute_wakeups(std::string_view text, const WakeupTraceOptions& opt,
                                     bool keep_list) {
  WakeupTraceSummary sum;
  for (const char* p : {kPathSelection, kPathTtwuRunnable, kPathQueuedRemote}) sum.paths[p] = 0;
  std::unordered_set<int> family = {opt.supervisor_pid};
  auto is_case = [&](int pid) { return pid != opt.supervisor_pid && family.count(pid) > 0; };
  std::unordered_map<int, TaskState> tasks;
  std::unordered_map<int, Pending> pending;
  std::unordered_set<int> stacked_wakers;  // woke their partner onto their own CPU, not yet out

  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view raw = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    std::string_view s = trim(raw);
    if (s.empty() || s.front() == '#') continue;
    auto fail = [&](const std::string& why) {
      std::string shown(s.substr(0, 100));
      throw std::invalid_argument("trace line " + std::to_string(line_no) + ": " + why + ": \"" +
                                  shown + (s.size() > 100 ? "...\"" : "\""));
    };
    if (s.rfind("CPU:", 0) == 0 && s.find("[LOST ") != std::string_view::npos) {
      size_t a = s.find("[LOST ") + 6, b = s.find(' ', a);
      int64_t n = 0;  // fail() throws
      if (b == std::string_view::npos || !to_int(s.substr(a, b - a), n)) fail("bad LOST line");
      sum.lost += n;
      continue;
    }
    Line l;
    if (auto why = parse_line(s, l)) fail(*why);
    ++sum.events;
    const std::string_view ev = l.event;
    auto need = [&](std::optional<int64_t> v, const char* key) {
      if (!v) fail(std::string(ev) + ": no integer " + key + "=");
      return *v;
    };
    if (ev == "sched_process_fork") {
      // The parent is the running task (a child_comm could hold " pid=" and fool the field).
      const int parent = l.pid;
      const int child = static_cast<int>(need(int_field(l.fields, "child_pid"), "child_pid"));
      if (family.count(parent)) family.insert(child);
    } else if (ev == "sched_waking") {
      const int p = static_cast<int>(need(int_field(l.fields, "pid"), "pid"));
      const int prev = static_cast<int>(need(int_field(l.fields, "target_cpu"), "target_cpu"));
      if (!is_case(p)) continue;
      if (auto it = pending.find(p); it != pending.end() && it->second.counted) ++sum.unmatched;
      Pending w;
      w.waker = l.pid;
      w.waker_cpu = l.cpu;
      w.prev = prev;
      w.ts = l.ts_ns;
      w.st = tasks[p].st;
      w.blocked_at = tasks[p].blocked_at;
      w.counted = is_case(l.pid) && l.pid != p;
      pending[p] = w;
    } else if (ev == "sched_migrate_task") {
      const int p = static_cast<int>(need(int_field(l.fields, "pid"), "pid"));
      need(int_field(l.fields, "dest_cpu"), "dest_cpu");
      if (!is_case(p)) continue;
      if (auto it = pending.find(p); it != pending.end()) {
        it->second.migrated = true;
        ++sum.migrations_at_wakeup;
      } else {
        ++sum.migrations_other;
      }
    } else if (ev == "sched_switch") {
      const size_t arrow = l.fields.find(" ==> ");
      if (arrow == std::string_view::npos) fail("sched_switch: no \" ==> \"");
      const std::string_view left = l.fields.substr(0, arrow), right = l.fields.substr(arrow + 5);
      const int prev = static_cast<int>(need(int_field(left, "prev_pid"), "prev_pid"));
      const auto state = str_field(left, "prev_state");
      if (!state || state->empty()) fail("sched_switch: no prev_state=");
      const int next =
          static_cast<int>(need(int_field(" " + std::string(right), "next_pid"), "next_pid"));
      if (stacked_wakers.erase(prev) && state->front() == 'R') ++sum.stacked_waker_preempted;
      if (is_case(prev)) {
        TaskState& t = tasks[prev];
        if (state->front() == 'R') {
          t.st = RunState::kQueued;
        } else {
          t.st = RunState::kBlocked;
          t.blocked_at = l.ts_ns;
          if (auto it = pending.find(prev); it != pending.end()) it->second.blocked_after = true;
        }
      }
      if (is_case(next)) tasks[next].st = RunState::kRunning;
    } else if (ev == "sched_wakeup") {
      const int p = static_cast<int>(need(int_field(l.fields, "pid"), "pid"));
      const int target = static_cast<int>(need(int_field(l.fields, "target_cpu"), "target_cpu"));
      if (!is_case(p)) continue;
      auto it = pending.find(p);
      if (it == pending.end()) {
        ++sum.unmatched;
        continue;
      }
      const Pending w = it->second;
      pending.erase(it);
      tasks[p].st = RunState::kQueued;
      if (!w.counted) {
        if (w.waker != opt.supervisor_pid && !is_case(w.waker)) {
          ++sum.foreign_wakeups;
          sum.foreign_moved += target != w.prev;
        }
        continue;
      }
      const bool queued = w.st == RunState::kRunning || w.st == RunState::kQueued;
      const bool remote = l.cpu != w.waker_cpu;
      const bool switching_out =
          w.blocked_after || (w.st == RunState::kBlocked && w.blocked_at >= 0 &&
                              w.ts - w.blocked_at <= opt.on_cpu_window_ns);
      std::string path = kPathSelection;
      if (!w.migrated && queued && !w.blocked_after)
        path = kPathTtwuRunnable;
      else if (!w.migrated && target == w.prev && remote && switching_out)
        path = kPathQueuedRemote;
      std::string cls = "unknown";
      if (opt.class_of) {
        try {
          cls = opt.class_of(w.waker_cpu, target);
        } catch (const std::exception&) {
          cls = "unknown";
        }
      }
      ++sum.wakeups;
      ++sum.paths[path];
      ++sum.classes_by_path[path][cls];
      if (target != w.prev) {
        ++sum.moved;
        ++sum.moved_by_class[cls];
        if (sum.first_moves.size() < kFirstMovesPerRun)
          sum.first_moves.push_back({0, sum.wakeups - 1, w.waker_cpu, w.prev, target, path});
      }
      if (target == w.waker_cpu) {
        ++sum.stacked_wakes;
        stacked_wakers.insert(w.waker);
      }
      if (w.st == RunState::kBlocked && w.blocked_at >= 0 && w.ts >= w.blocked_at)
        (target != w.prev ? sum.since_switch_out_moved : sum.since_switch_out_kept)
            .push_back(w.ts - w.blocked_at);
      sum.remote_delivery += remote;
      if (keep_list)
        sum.list.push_back({w.waker, p, w.waker_cpu, w.prev, target, l.cpu, path, cls});
    }
  }
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
