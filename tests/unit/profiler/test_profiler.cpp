// The per-op profiler: when it records, what each event holds (phase,
// nesting, self time, thread, input shapes), recording from several threads
// at once, and the table and Chrome trace made from events.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>
#include <unistd.h>

#include "kiln/error.hpp"
#include "kiln/profiler/profile_report.hpp"
#include "kiln/runtime.hpp"

using namespace kiln;

namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A forward and backward of relu(x @ w + b) summed.
void mlp_step(Runtime& rt) {
  Tensor x = rt.full({3, 4}, 0.5), w = rt.full({2, 4}, 0.25), b = rt.full({2}, 0.1);
  w.set_requires_grad(true);
  b.set_requires_grad(true);
  Tensor loss = rt.call1("sum", {rt.call1("relu", {rt.call1("linear", {x, w, b})})});
  rt.backward(loss);
}

ProfileEvent event(std::string name, ProfilePhase phase, int64_t start, int64_t end, int64_t children, int depth) {
  ProfileEvent e;
  e.name = std::move(name);
  e.phase = phase;
  e.start_ns = start;
  e.end_ns = end;
  e.children_ns = children;
  e.depth = depth;
  e.thread = 1;
  return e;
}

}  // namespace

TEST_CASE("profiler: begin and end in the wrong order are refused", "[profiler]") {
  Runtime rt;
  CHECK(error_of([&] { rt.profiler().end(); }).find("end without begin") != std::string::npos);
  CHECK(error_of([&] { rt.profiler().events(); }).find("no profile has been recorded") != std::string::npos);
  rt.profiler().begin();
  CHECK(error_of([&] { rt.profiler().begin(); }).find("already on") != std::string::npos);
  CHECK(error_of([&] { rt.profiler().events(); }).find("still on") != std::string::npos);
  rt.profiler().end();
  CHECK(rt.profiler().events().empty());
}

TEST_CASE("profiler: records op calls only while it is on", "[profiler]") {
  Runtime rt;
  Tensor a = rt.full({2, 3}, 1.0);
  rt.call1("add", {a, a});
  rt.profiler().begin();
  rt.call1("mul", {a, a});
  rt.profiler().end();
  rt.call1("sub", {a, a});
  const std::vector<ProfileEvent> events = rt.profiler().events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].name == "mul");
  CHECK(events[0].phase == ProfilePhase::forward);
  CHECK(events[0].device == Device::cpu());
  CHECK(events[0].depth == 0);
  CHECK(events[0].end_ns >= events[0].start_ns);
  REQUIRE(events[0].input_shapes.size() == 2);
  CHECK(events[0].input_shapes[0] == Shape({2, 3}));
  // A new profile starts empty.
  rt.profiler().begin();
  rt.profiler().end();
  CHECK(rt.profiler().events().empty());
}

TEST_CASE("profiler: backward functions and the ops they call are the backward phase", "[profiler]") {
  Runtime rt;
  rt.profiler().begin();
  mlp_step(rt);
  rt.profiler().end();
  const std::vector<ProfileEvent> events = rt.profiler().events();
  std::map<std::string, int> forward, backward;
  for (const ProfileEvent& e : events) ++(e.phase == ProfilePhase::forward ? forward : backward)[e.name];
  CHECK(forward["linear"] == 1);
  CHECK(forward["relu"] == 1);
  CHECK(forward["sum"] == 1);
  CHECK(backward["linear backward"] == 1);
  CHECK(backward["relu backward"] == 1);
  CHECK(backward["sum backward"] == 1);
  CHECK(forward.count("linear backward") == 0);
  // Backward functions are outermost; what they call is nested in them.
  for (const ProfileEvent& e : events)
    if (e.name.ends_with(" backward")) CHECK(e.depth == 0);
  CHECK(std::any_of(events.begin(), events.end(),
                    [](const ProfileEvent& e) { return e.phase == ProfilePhase::backward && e.depth == 1; }));
}

TEST_CASE("profiler: children lie inside their parent and self time is total less children", "[profiler]") {
  Runtime rt;
  rt.profiler().begin();
  mlp_step(rt);
  rt.profiler().end();
  const std::vector<ProfileEvent> events = rt.profiler().events();
  int nested = 0;
  for (const ProfileEvent& parent : events) {
    int64_t children = 0;
    for (const ProfileEvent& child : events) {
      if (child.thread != parent.thread || child.depth != parent.depth + 1) continue;
      if (child.start_ns < parent.start_ns || child.end_ns > parent.end_ns) continue;
      children += child.total_ns();
      ++nested;
    }
    CHECK(parent.children_ns == children);
    CHECK(parent.self_ns() >= 0);
  }
  CHECK(nested > 0);
  // Every nested event has its parent.
  for (const ProfileEvent& child : events) {
    if (child.depth == 0) continue;
    CHECK(std::any_of(events.begin(), events.end(), [&](const ProfileEvent& p) {
      return p.thread == child.thread && p.depth == child.depth - 1 && p.start_ns <= child.start_ns &&
             child.end_ns <= p.end_ns;
    }));
  }
}

TEST_CASE("profiler: threads calling ops at once each record their own", "[profiler]") {
  Runtime rt;
  constexpr int kThreads = 4, kCalls = 200;
  Tensor a = rt.full({8}, 1.0);
  rt.profiler().begin();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kCalls; ++i) rt.call1("add", {a, a});
    });
  for (std::thread& t : threads) t.join();
  rt.profiler().end();
  std::map<int, int> per_thread;
  for (const ProfileEvent& e : rt.profiler().events()) {
    CHECK(e.name == "add");
    ++per_thread[e.thread];
  }
  REQUIRE(per_thread.size() == size_t(kThreads));
  for (const auto& [thread, calls] : per_thread) {
    CHECK(thread >= 1);
    CHECK(thread <= kThreads);
    CHECK(calls == kCalls);
  }
}

TEST_CASE("profiler: spans on threads and named tracks stay out of the ops' times and table", "[profiler]") {
  Runtime rt;
  Tensor a = rt.full({8}, 1.0);
  rt.profiler().begin();
  {
    ProfiledSpan step(rt.profiler(), "", "step 1");
    rt.call1("add", {a, a});
  }
  std::thread worker([&] {
    name_profiled_thread("loader worker");
    ProfiledSpan batch(rt.profiler(), "", "batch 0");
    ProfiledSpan copy(rt.profiler(), "copies", "copy batch 0");
  });
  worker.join();
  rt.profiler().end();
  const std::vector<ProfileEvent> events = rt.profiler().events();
  REQUIRE(events.size() == 4);
  // Thread 1 (this one): the step span, then the op it encloses, at depth 0 with no children.
  CHECK((events[0].name == "step 1" && events[0].span && events[0].thread == 1 && events[0].track.empty()));
  CHECK((events[1].name == "add" && !events[1].span && events[1].depth == 0 && events[1].children_ns == 0));
  CHECK(events[0].start_ns <= events[1].start_ns);
  CHECK(events[1].end_ns <= events[0].end_ns);
  CHECK((events[2].name == "batch 0" && events[2].thread == 2 && events[2].track.empty()));
  CHECK((events[3].name == "copy batch 0" && events[3].thread == 2 && events[3].track == "copies"));
  CHECK(rt.profiler().thread_names() == std::vector<std::string>{"", "loader worker"});
  const std::vector<ProfileRow> rows = profile_summary(events);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].name == "add");
}

TEST_CASE("chrome_trace_json: threads and named span tracks are named tracks of their own", "[profiler]") {
  ProfileEvent op = event("add", ProfilePhase::forward, 1000, 2000, 0, 0);
  ProfileEvent span = event("batch 3", ProfilePhase::forward, 0, 3000, 0, 0);
  span.span = true;
  span.thread = 2;
  ProfileEvent copy = span;
  copy.name = "copy batch 3";
  copy.track = "host-to-device copies";
  const std::string names[] = {"", "loader worker"};
  const std::string json = chrome_trace_json(std::vector<ProfileEvent>{op, span, copy}, names);
  const std::string pid = std::to_string(::getpid());
  const auto has = [&](const std::string& text) { return json.find(text) != std::string::npos; };
  CHECK(has("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":1,\"args\":{\"name\":\"thread 1\"}}"));
  CHECK(has("\"tid\":2,\"args\":{\"name\":\"loader worker\"}}"));
  CHECK(has("\"tid\":3,\"args\":{\"name\":\"host-to-device copies\"}}"));
  CHECK(has("{\"name\":\"batch 3\",\"cat\":\"span\",\"ph\":\"X\",\"pid\":" + pid + ",\"tid\":2,\"ts\":0.000,\"dur\":3.000}"));
  CHECK(has("{\"name\":\"copy batch 3\",\"cat\":\"span\",\"ph\":\"X\",\"pid\":" + pid + ",\"tid\":3,"));
  CHECK(has("{\"name\":\"add\",\"cat\":\"forward\",\"ph\":\"X\",\"pid\":" + pid + ",\"tid\":1,"));
}

TEST_CASE("profile_table: one row per op and phase, forward first, by total time", "[profiler]") {
  // matmul: 2 calls, 3 ms total, 3 ms self; linear: 1 call of 4 ms with 1 ms
  // of children; "linear backward": 2 ms. Self time of all: 3 + 3 + 2 = 8 ms.
  const std::vector<ProfileEvent> events = {
      event("linear", ProfilePhase::forward, 0, 4'000'000, 1'000'000, 0),
      event("matmul", ProfilePhase::forward, 1'000'000, 2'000'000, 0, 1),
      event("matmul", ProfilePhase::forward, 5'000'000, 7'000'000, 0, 0),
      event("linear backward", ProfilePhase::backward, 8'000'000, 10'000'000, 0, 0),
  };
  const std::vector<ProfileRow> rows = profile_summary(events);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].name == "linear");
  CHECK(rows[1].name == "matmul");
  CHECK(rows[1].calls == 2);
  CHECK(rows[1].total_ns == 3'000'000);
  CHECK(rows[2].name == "linear backward");
  CHECK(profile_table(events) ==
        "op               phase        calls     total ms      self ms      mean µs  % total\n"
        "linear           forward          1        4.000        3.000      4000.00     50.0\n"
        "matmul           forward          2        3.000        3.000      1500.00     37.5\n"
        "\n"
        "linear backward  backward         1        2.000        2.000      2000.00     25.0\n"
        "\n"
        "forward 6.000 ms, backward 2.000 ms (self time of 4 profiled calls)\n");
}

TEST_CASE("chrome_trace_json: complete events with times in microseconds", "[profiler]") {
  ProfileEvent e = event("say \"hi\"", ProfilePhase::backward, 1'234'567, 2'000'000, 500, 1);
  e.device = Device::cuda(1);
  e.input_shapes = {Shape({2, 3}), Shape()};
  const std::string pid = std::to_string(::getpid());
  CHECK(chrome_trace_json(std::vector<ProfileEvent>{e}) ==
        "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":0,\"args\":{\"name\":\"kiln\"}},\n"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":1,\"args\":{\"name\":\"thread 1\"}},\n"
        "{\"name\":\"say \\\"hi\\\"\",\"cat\":\"backward\",\"ph\":\"X\",\"pid\":" + pid +
        ",\"tid\":1,\"ts\":1234.567,\"dur\":765.433,\"args\":{\"device\":\"cuda:1\",\"depth\":1,\"self_us\":764.933,"
        "\"input_shapes\":[[2,3],[]]}}\n"
        "]}\n");
}

TEST_CASE("write_chrome_trace: a failed write leaves what was there", "[profiler]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kiln_trace_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "occupied");
  const std::vector<ProfileEvent> events = {event("add", ProfilePhase::forward, 0, 1000, 0, 0)};
  // A directory in the way: the rename fails, nothing is left beside it.
  const std::string message = error_of([&] { write_chrome_trace(events, (dir / "occupied").string()); });
  CHECK(message.find("cannot save") != std::string::npos);
  CHECK(fs::is_directory(dir / "occupied"));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  // A good path gets the whole text.
  write_chrome_trace(events, (dir / "trace.json").string());
  std::ifstream in(dir / "trace.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == chrome_trace_json(events));
  fs::remove_all(dir);
}
