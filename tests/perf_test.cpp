#include "common/measure/perf.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/util/sys.h"
#include "tests/support.h"

namespace wb {
namespace {

const CounterValue* find_value(const std::vector<CounterValue>& values, const std::string& name) {
  auto it = std::find_if(values.begin(), values.end(),
                         [&](const CounterValue& v) { return v.event == name; });
  return it == values.end() ? nullptr : &*it;
}

TEST(Perf, EncodesSoftwareEventsForUserAndKernel) {
  struct Expect {
    const char* event;
    uint64_t config;
    const char* pfm_name;
  };
  for (const Expect& e :
       {Expect{"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES,
               "PERF_COUNT_SW_CONTEXT_SWITCHES"},
        Expect{"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS, "PERF_COUNT_SW_CPU_MIGRATIONS"},
        Expect{"task-clock", PERF_COUNT_SW_TASK_CLOCK, "PERF_COUNT_SW_TASK_CLOCK"},
        Expect{"page-faults", PERF_COUNT_SW_PAGE_FAULTS, "PERF_COUNT_SW_PAGE_FAULTS"}}) {
    SCOPED_TRACE(e.event);
    const EventEncoding enc = encode_event(e.event);
    ASSERT_EQ(enc.error, "");
    EXPECT_EQ(enc.event, e.event);
    EXPECT_EQ(enc.attr.type, static_cast<uint32_t>(PERF_TYPE_SOFTWARE));
    EXPECT_EQ(enc.attr.config, e.config);
    EXPECT_EQ(enc.attr.size, sizeof(perf_event_attr));
    EXPECT_EQ(enc.attr.exclude_user, 0u);
    EXPECT_EQ(enc.attr.exclude_kernel, 0u);
    EXPECT_NE(enc.fstr.find(e.pfm_name), std::string::npos) << enc.fstr;
  }
}

TEST(Perf, UnknownEventDoesNotEncode) {
  const EventEncoding enc = encode_event("wb_no_such_event");
  EXPECT_EQ(enc.error, "libpfm4: event not found");
  EXPECT_EQ(enc.fstr, "");
}

TEST(Perf, DefaultEventsEncodeAndIncludeSanityEvents) {
  const std::vector<std::string> events = default_events();
  for (const char* required : {"cycles", "instructions", "cache-misses", "branch-misses",
                               "context-switches", "cpu-migrations", "task-clock", "page-faults"}) {
    EXPECT_NE(std::find(events.begin(), events.end(), required), events.end()) << required;
  }
  for (const std::string& e : events) EXPECT_EQ(encode_event(e).error, "") << e;
  EXPECT_LE(events.size(), CounterBlock::kMaxEntries);
}

TEST(Perf, ScalesMultiplexedCounts) {
  ScaledCount s = scale_count(1000, 100, 100);
  EXPECT_EQ(s.value, 1000.0);
  EXPECT_FALSE(s.multiplexed);
  s = scale_count(1000, 100, 25);  // on the PMU a quarter of the time
  EXPECT_DOUBLE_EQ(s.value, 4000.0);
  EXPECT_TRUE(s.multiplexed);
  s = scale_count(0, 0, 0);  // never enabled
  EXPECT_EQ(s.value, 0.0);
  EXPECT_FALSE(s.multiplexed);
  s = scale_count(7, 100, 0);  // enabled but never scheduled: "<not counted>"
  EXPECT_TRUE(std::isnan(s.value));
  EXPECT_TRUE(s.multiplexed);
  // Large counts must not overflow in the product (raw * enabled exceeds 2^64 here).
  s = scale_count(uint64_t{1} << 62, uint64_t{3} << 40, uint64_t{1} << 40);
  EXPECT_DOUBLE_EQ(s.value, 3.0 * std::ldexp(1.0, 62));
}

TEST(Perf, ExplainsOpenErrors) {
  EXPECT_EQ(explain_open_error(ENOENT, true, false, 2),
            "perf_event_open: ENOENT (no hardware PMU; in a VM?)");
  const std::string sw = explain_open_error(ENOENT, false, false, 2);
  EXPECT_EQ(sw.rfind("perf_event_open: ENOENT (", 0), 0u) << sw;
  EXPECT_EQ(sw.find("VM"), std::string::npos) << sw;
  EXPECT_EQ(explain_open_error(ENOENT, true, true, 2).find("VM"), std::string::npos);

  const std::string acces = explain_open_error(EACCES, true, true, 2);
  EXPECT_EQ(acces.rfind("perf_event_open: EACCES (", 0), 0u) << acces;
  EXPECT_NE(acces.find("kernel.perf_event_paranoid=2"), std::string::npos) << acces;
  EXPECT_NE(acces.find("sysctl -w kernel.perf_event_paranoid=1"), std::string::npos) << acces;
  const std::string perm = explain_open_error(EPERM, false, true, std::nullopt);
  EXPECT_EQ(perm.rfind("perf_event_open: EPERM (", 0), 0u) << perm;
  EXPECT_NE(perm.find("unreadable"), std::string::npos) << perm;
  // Denied although paranoid allows it: the sysctl is not the fix, so it is not suggested.
  EXPECT_EQ(explain_open_error(EACCES, true, true, 1).find("sysctl"), std::string::npos);

  // Every reason fits a CounterBlock entry, so results from forked children arrive whole.
  for (int err : {ENOENT, EACCES, EPERM, ENODEV, EOPNOTSUPP, EINVAL, EMFILE, ENFILE, EBUSY, ENOSYS,
                  E2BIG, ESRCH}) {
    for (std::optional<int> paranoid : {std::optional<int>{}, std::optional<int>{-1},
                                        std::optional<int>{2}, std::optional<int>{4}}) {
      const std::string reason = explain_open_error(err, true, false, paranoid);
      EXPECT_LT(reason.size(), CounterBlock::kReasonChars) << reason;
    }
  }
}

TEST(Perf, UnknownEventIsUnavailableAndDoesNotThrow) {
  WB_SKIP_WITHOUT_PERF_EVENTS();
  const PerfCounters pc({"task-clock", "wb_no_such_event", "task-clock"});
  ASSERT_EQ(pc.unavailable().count("wb_no_such_event"), 1u);
  EXPECT_EQ(pc.unavailable().at("wb_no_such_event"),
            "libpfm4: event not found (see `wakebench events`)");
  EXPECT_EQ(pc.opened(), std::vector<std::string>{"task-clock"});  // duplicate opened once
  EXPECT_EQ(pc.read().size(), 1u);
}

// Counters in one thread of a same-CPU pipe ping-pong count that thread only, and only between
// enable() and disable().
TEST(Perf, SoftwareEventsCountPinnedPingPong) {
  WB_SKIP_WITHOUT_PERF_EVENTS();
  constexpr int kRoundTrips = 100;
  const int cpu = allowed_cpus().front();
  int to_echo[2], to_main[2];
  ASSERT_EQ(pipe(to_echo), 0);
  ASSERT_EQ(pipe(to_main), 0);
  std::thread echo([&] {
    set_affinity({cpu});
    char c;
    while (::read(to_echo[0], &c, 1) == 1 && c != 'q') {
      if (::write(to_main[1], &c, 1) != 1) break;
    }
  });
  std::vector<CounterValue> during, after;
  UnavailableEvents unavailable;
  std::size_t groups = 0;
  bool io_ok = true;
  std::thread measured([&] {
    set_affinity({cpu});
    PerfCounters pc({"context-switches", "cpu-migrations", "task-clock", "page-faults"});
    // The kernel counts a migration at the task's next switch-in (perf_event_task_sched_in), and
    // only while some cpu-migrations event exists: a move by set_affinity() while another test's
    // event existed can wait there until ours is enabled. A sleep switches in with ours open.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    auto round_trips = [&](int n) {
      char c = 'x';
      for (int i = 0; i < n; ++i)
        io_ok &= ::write(to_echo[1], &c, 1) == 1 && ::read(to_main[0], &c, 1) == 1;
    };
    pc.enable();
    round_trips(kRoundTrips);
    pc.disable();
    during = pc.read();
    round_trips(kRoundTrips);  // not counted
    after = pc.read();
    unavailable = pc.unavailable();
    groups = pc.group_count();
    const char q = 'q';
    io_ok &= ::write(to_echo[1], &q, 1) == 1;
  });
  measured.join();
  echo.join();
  for (int fd : {to_echo[0], to_echo[1], to_main[0], to_main[1]}) close(fd);
  ASSERT_TRUE(io_ok);
  ASSERT_TRUE(unavailable.empty()) << unavailable.begin()->second;
  ASSERT_EQ(during.size(), 4u);
  EXPECT_EQ(groups, 1u);  // software events share one group
  const CounterValue* cs = find_value(during, "context-switches");
  ASSERT_NE(cs, nullptr);
  // The echo thread can only answer while the measured thread is off the CPU, so the measured
  // thread is switched out at least once per round trip; about once is expected. Counting the
  // echo thread too (inherit, or a per-process counter) would double it.
  EXPECT_GE(cs->value, kRoundTrips);
  EXPECT_LE(cs->value, 1.5 * kRoundTrips + 20);
  EXPECT_EQ(find_value(during, "cpu-migrations")->value, 0.0);  // pinned before enable()
  EXPECT_GT(find_value(during, "task-clock")->value, 0.0);
  for (const CounterValue& v : during) {
    EXPECT_FALSE(v.multiplexed) << v.event;  // software events are never multiplexed
    const CounterValue* later = find_value(after, v.event);
    ASSERT_NE(later, nullptr);
    EXPECT_EQ(later->value, v.value) << v.event << " counted after disable()";
  }
}

TEST(Perf, HardwareEventsCountOrSayWhyNot) {
  const std::vector<std::string> events = {"cycles", "instructions", "branch-misses"};
  PerfCounters pc(events);
  volatile uint64_t sink = 0;
  pc.enable();
  for (uint64_t i = 0; i < 1000000; ++i) sink = sink + (i % 7 == 3 ? i : 1);
  pc.disable();
  const std::vector<CounterValue> values = pc.read();
  const std::regex errno_reason("^perf_event_open: E[A-Z0-9]+ \\(.+\\)$");
  for (const std::string& e : events) {
    SCOPED_TRACE(e);
    const CounterValue* v = find_value(values, e);
    const auto it = pc.unavailable().find(e);
    ASSERT_TRUE((v != nullptr) != (it != pc.unavailable().end()))
        << "an event is either counted or unavailable, never both or neither";
    if (v != nullptr) {
      if (e != "branch-misses") {
        EXPECT_GT(v->value, 0.0);
      }
    } else {
      EXPECT_TRUE(std::regex_match(it->second, errno_reason)) << it->second;
    }
  }
}

TEST(Perf, RequireEventsTurnsUnavailableIntoAnError) {
  EXPECT_NO_THROW(require_events({}, "waker"));
  const UnavailableEvents missing = {
      {"cycles", "perf_event_open: ENOENT (no hardware PMU; in a VM?)"},
      {"foo", "libpfm4: event not found (see `wakebench events`)"}};
  try {
    require_events(missing, "waker");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg,
              "required perf events unavailable on waker: cycles (perf_event_open: ENOENT (no "
              "hardware PMU; in a VM?)); foo (libpfm4: event not found (see `wakebench events`))");
  }
}

TEST(Perf, CounterBlockRoundTrips) {
  static_assert(std::is_trivially_copyable_v<CounterBlock>);
  const std::vector<CounterValue> values = {{"context-switches", 200, false},
                                            {"cycles", 12345.5, true}};
  const UnavailableEvents unavailable = {{"instructions", "perf_event_open: ENOENT (x)"}};
  const CounterBlock block = to_counter_block(values, unavailable);
  // Through raw bytes, as through shared memory.
  std::vector<unsigned char> bytes(sizeof(CounterBlock));
  std::memcpy(bytes.data(), &block, sizeof(block));
  CounterBlock copy;
  std::memcpy(&copy, bytes.data(), sizeof(copy));
  const CounterResults back = from_counter_block(copy);
  ASSERT_EQ(back.values.size(), 2u);
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(back.values[i].event, values[i].event);
    EXPECT_EQ(back.values[i].value, values[i].value);
    EXPECT_EQ(back.values[i].multiplexed, values[i].multiplexed);
  }
  EXPECT_EQ(back.unavailable, unavailable);
}

TEST(Perf, CounterBlockTruncatesSafely) {
  const std::string long_name(100, 'e');
  const std::string long_reason(400, 'r');
  std::vector<CounterValue> values;
  for (std::size_t i = 0; i < CounterBlock::kMaxEntries + 3; ++i)
    values.push_back({"ev" + std::to_string(i), static_cast<double>(i), false});
  values[0].event = long_name;
  const CounterBlock block = to_counter_block(values, {{long_name, long_reason}});
  EXPECT_EQ(block.n, CounterBlock::kMaxEntries);
  EXPECT_EQ(block.dropped, 3u);
  EXPECT_EQ(block.v[0].event[CounterBlock::kEventChars - 1], '\0');
  EXPECT_EQ(block.u[0].reason[CounterBlock::kReasonChars - 1], '\0');
  const CounterResults back = from_counter_block(block);
  ASSERT_EQ(back.values.size(), CounterBlock::kMaxEntries);
  EXPECT_EQ(back.values[0].event, long_name.substr(0, CounterBlock::kEventChars - 1));
  EXPECT_EQ(back.values[1].event, "ev1");
  const std::string truncated = long_name.substr(0, CounterBlock::kEventChars - 1);
  ASSERT_EQ(back.unavailable.count(truncated), 1u);
  EXPECT_EQ(back.unavailable.at(truncated), long_reason.substr(0, CounterBlock::kReasonChars - 1));
  // The dropped entries are reported, not silently lost.
  ASSERT_EQ(back.unavailable.count("(more events)"), 1u);
  EXPECT_NE(back.unavailable.at("(more events)").find("3 more"), std::string::npos);

  // A half-written block (counts out of range, strings without NUL) does not overrun.
  CounterBlock garbage;
  std::memset(&garbage, 'z', sizeof(garbage));
  const CounterResults g = from_counter_block(garbage);
  EXPECT_EQ(g.values.size(), CounterBlock::kMaxEntries);
  EXPECT_EQ(g.values[0].event.size(), CounterBlock::kEventChars);
}

void touch_pages(std::size_t pages) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) _exit(3);
  for (std::size_t i = 0; i < pages; ++i) static_cast<volatile char*>(p)[i * page] = 1;
  munmap(p, pages * page);
}

// processes mode: the child opens its own counters after fork and hands them back through a
// shared mapping as a CounterBlock.
TEST(Perf, CountersInForkedChildCountTheChild) {
  WB_SKIP_WITHOUT_PERF_EVENTS();
  constexpr std::size_t kBeforePages = 1024, kDuringPages = 256;
  constexpr int kSleeps = 5;
  void* shm = mmap(nullptr, sizeof(CounterBlock), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shm, MAP_FAILED);
  auto* block = static_cast<CounterBlock*>(shm);
  std::memset(block, 0, sizeof(*block));
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    PerfCounters pc({"page-faults", "context-switches", "task-clock", "cpu-migrations"});
    touch_pages(kBeforePages);  // not counted
    pc.enable();
    touch_pages(kDuringPages);
    for (int i = 0; i < kSleeps; ++i) {
      const timespec ms = {0, 1000000};
      nanosleep(&ms, nullptr);
    }
    pc.disable();
    touch_pages(kBeforePages);  // not counted
    *block = to_counter_block(pc.read(), pc.unavailable());
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe_wait_status(status);
  const CounterResults r = from_counter_block(*block);
  munmap(shm, sizeof(CounterBlock));
  ASSERT_TRUE(r.unavailable.empty()) << r.unavailable.begin()->second;
  ASSERT_EQ(r.values.size(), 4u);
  const double faults = find_value(r.values, "page-faults")->value;
  EXPECT_GE(faults, kDuringPages);
  EXPECT_LT(faults, kBeforePages);  // the untimed work before and after is excluded
  EXPECT_GE(find_value(r.values, "context-switches")->value, kSleeps);
  EXPECT_GE(find_value(r.values, "task-clock")->value, 0.0);
}

TEST(Perf, DetectsPmusWithTheGenericPerfTable) {
  const std::vector<PfmPmuInfo> pmus = detected_pmus();
  auto perf =
      std::find_if(pmus.begin(), pmus.end(), [](const PfmPmuInfo& p) { return p.name == "perf"; });
  ASSERT_NE(perf, pmus.end()) << "libpfm4's perf_events generic PMU is present on every Linux";
  EXPECT_EQ(perf->type, "os-generic");
  auto cs = std::find_if(perf->events.begin(), perf->events.end(), [](const PfmEventInfo& e) {
    return e.name == "perf::PERF_COUNT_SW_CONTEXT_SWITCHES";
  });
  ASSERT_NE(cs, perf->events.end());
  EXPECT_FALSE(cs->desc.empty());
}

std::string events_output(const std::string& cmd, int* status) {
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return "";
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  *status = pclose(f);
  return out;
}

TEST(Perf, EventsCommandJson) {
  int status = -1;
  const std::string out = events_output(std::string(WB_BINARY) + " events --json", &status);
  ASSERT_EQ(status, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(out);
  ASSERT_TRUE(j.at("pmus").is_array());
  bool has_perf = false;
  for (const auto& p : j.at("pmus")) {
    EXPECT_TRUE(p.at("events").is_array());
    if (p.at("name") == "perf") has_perf = !p.at("events").empty();
  }
  EXPECT_TRUE(has_perf);
  const auto& defaults = j.at("default_events");
  EXPECT_EQ(defaults.size(), default_events().size());
  for (const auto& d : defaults) {
    SCOPED_TRACE(d.dump());
    if (d.at("available").get<bool>()) {
      EXPECT_TRUE(d.at("reason").is_null());
    } else {
      const std::string reason = d.at("reason");
      EXPECT_TRUE(reason.rfind("perf_event_open: E", 0) == 0 || reason.rfind("libpfm4: ", 0) == 0);
    }
    const std::string event = d.at("event");
    // Software events open on every machine perf_event_paranoid allows them on, unless
    // perf_event_open is not there at all (qemu-user).
    if (event == "context-switches" || event == "task-clock") {
      if (!d.at("available").get<bool>()) {
        const bool unsupported = !wb::test::perf_events_unsupported().empty();
        EXPECT_NE(
            d.at("reason").get<std::string>().find(unsupported ? "ENOSYS" : "perf_event_paranoid"),
            std::string::npos);
      }
    }
  }
  int text_status = -1;
  const std::string text = events_output(std::string(WB_BINARY) + " events", &text_status);
  EXPECT_EQ(text_status, 0);
  EXPECT_NE(text.find("perf::PERF_COUNT_SW_CONTEXT_SWITCHES"), std::string::npos);
}

}  // namespace
}  // namespace wb
