// The training report's advice rules, one by one, on made-up runs: each
// fires when its evidence holds, with the numbers in its text, and stays
// quiet when it does not.
#include <catch2/catch.hpp>

#include <string>

#include "kiln/report/device_peaks.hpp"
#include "kiln/report/training_report.hpp"

using namespace kiln::report;

namespace {

// Ten steps of 40 ms: 2 ms input wait, 12 forward, 22 backward, 3 optimizer, 1 other.
RunTotals quiet_run() {
  RunTotals t;
  t.steps = 10;
  t.samples = 640;
  t.seconds = {.input_wait = 0.020, .forward = 0.120, .backward = 0.220, .optimizer = 0.030, .other = 0.010};
  t.peak_bytes = 700ll << 20;
  return t;
}

RunSetup cpu_setup() {
  RunSetup s;
  s.loader_workers = 2;
  s.loader_prefetch = 4;
  s.cpu_threads = 2;
  s.batch_size = 64;
  return s;
}

bool has_topic(const std::vector<Advice>& advice, const std::string& topic) {
  for (const Advice& a : advice)
    if (a.topic == topic) return true;
  return false;
}

std::string text_of(const std::vector<Advice>& advice, const std::string& topic) {
  for (const Advice& a : advice)
    if (a.topic == topic) return a.text;
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a run whose numbers show nothing gets no advice", "[report]") {
  CHECK(advise(quiet_run(), cpu_setup()).empty());
  const std::string report = format_report(quiet_run(), cpu_setup());
  CHECK(contains(report, "advice: none"));
  CHECK(contains(report, "10 steps after the first, 640 samples"));
  CHECK(contains(report, "step time        40.00 ms"));
  CHECK(contains(report, "forward          12.00 ms   30.0%"));
  CHECK(contains(report, "backward         22.00 ms   55.0%"));
  CHECK(contains(report, "1600.0 samples/s"));
  CHECK(!contains(report, "communication"));  // one process
  CHECK(contains(report, "not measured"));    // no FLOP count
}

TEST_CASE("a report without steps says so", "[report]") {
  CHECK(contains(format_report(RunTotals{}, cpu_setup()), "no step to report"));
  CHECK(advise(RunTotals{}, cpu_setup()).empty());
}

TEST_CASE("input wait over a tenth of the step asks for loader workers", "[report]") {
  RunTotals t = quiet_run();
  t.seconds.input_wait = 0.100;  // 10 ms of 48 ms
  RunSetup s = cpu_setup();
  s.loader_workers = 0;
  const std::vector<Advice> advice = advise(t, s);
  REQUIRE(has_topic(advice, "input"));
  const std::string text = text_of(advice, "input");
  CHECK(contains(text, "10.00 ms of 48.00 ms per step (20.8%)"));
  CHECK(contains(text, "0 loader workers"));
  CHECK(contains(text, "give the loader 2 workers"));
  CHECK(contains(format_report(t, s), "  - input: "));

  SECTION("with workers below the machine's threads: twice as many") {
    s.loader_workers = 2;
    s.cpu_threads = 16;
    CHECK(contains(text_of(advise(t, s), "input"), "give the loader 4 workers and a prefetch of 8"));
  }
  SECTION("with every thread a worker: cheaper transforms") {
    s.loader_workers = 2;
    s.cpu_threads = 2;
    CHECK(contains(text_of(advise(t, s), "input"), "make the transforms cheaper"));
  }
  SECTION("a wait of a tenth or less of the step for workers is not worth acting on") {
    s.loader_workers = 2;
    t.seconds.input_wait = 0.030;
    CHECK(!has_topic(advise(t, s), "input"));
  }
}

TEST_CASE("batches made on the training thread ask for workers from half a percent of the step", "[report]") {
  RunTotals t = quiet_run();
  RunSetup s = cpu_setup();
  s.loader_workers = 0;
  t.seconds.input_wait = 0.006;  // 0.6 ms of 38.6 ms
  const std::string text = text_of(advise(t, s), "input");
  CHECK(contains(text, "0.60 ms of 38.60 ms per step (1.6%)"));
  CHECK(contains(text, "made on the training thread (0 loader workers): give the loader 2 workers"));
  CHECK(contains(text, "expected gain up to 1.6% of the step"));
  SECTION("with workers the same wait is theirs to hide: no advice") {
    s.loader_workers = 2;
    CHECK(!has_topic(advise(t, s), "input"));
  }
  SECTION("half a percent or less is within the noise of step times") {
    t.seconds.input_wait = 0.0019;  // 0.19 ms of 38.49 ms: 0.49%
    CHECK(!has_topic(advise(t, s), "input"));
  }
}

TEST_CASE("a device less than 40% used suggests a larger batch", "[report]") {
  RunTotals t = quiet_run();
  RunSetup s = cpu_setup();
  s.device = "cuda:0";
  s.on_gpu = true;
  s.memory_capacity = 8ll << 30;  // the peak is 700 MiB: 8.5%
  const std::string text = text_of(advise(t, s), "memory");
  CHECK(contains(text, "700.0 MiB of the 8.0 GiB cuda:0 can give (8.5%)"));
  CHECK(contains(text, "a batch of about 599 instead of 64"));
  s.memory_capacity = 1536ll << 20;  // 45.6%
  CHECK(!has_topic(advise(t, s), "memory"));
  s.memory_capacity = 0;  // unknown
  CHECK(!has_topic(advise(t, s), "memory"));
}

TEST_CASE("f32 on a device with fast bf16 suggests autocast", "[report]") {
  RunSetup s = cpu_setup();
  s.device = "cuda:0";
  s.fast_low_precision = "bf16";
  s.low_precision_speedup = 14.8;
  const std::string text = text_of(advise(quiet_run(), s), "precision");
  CHECK(contains(text, "precision = \"bf16\""));
  CHECK(contains(text, "14.8x f32's"));
  s.precision = "bf16";
  CHECK(!has_topic(advise(quiet_run(), s), "precision"));
  s.precision = "f32";
  s.fast_low_precision = "";
  CHECK(!has_topic(advise(quiet_run(), s), "precision"));
}

TEST_CASE("communication not overlapped with backward points at the buckets", "[report]") {
  RunTotals t = quiet_run();
  t.seconds.communication = 0.100;
  RunSetup s = cpu_setup();
  s.world_size = 4;
  const std::string text = text_of(advise(t, s), "communication");
  CHECK(contains(text, "10.00 ms of 50.00 ms per step (20.0%)"));
  CHECK(contains(text, "bucket_mb"));
  CHECK(contains(format_report(t, s), "communication"));
  t.seconds.communication = 0.040;  // 9.1%
  CHECK(!has_topic(advise(t, s), "communication"));
}

TEST_CASE("tiny ops dominating a profiled step point at the batch", "[report]") {
  RunSetup s = cpu_setup();
  s.profiled_step.top_ops = {{"add", 40, 0.0008}, {"matmul", 6, 0.0006}, {"relu", 20, 0.0002}};
  s.profiled_step.calls = 66;
  s.profiled_step.seconds = 0.0016;
  s.profiled_step.short_calls = 60;
  s.profiled_step.short_seconds = 0.0012;  // 75%
  const std::string text = text_of(advise(quiet_run(), s), "ops");
  CHECK(contains(text, "60 of the 66 op calls"));
  CHECK(contains(text, "75.0% of its op time"));
  CHECK(contains(text, "add 0.80 ms in 40 calls, matmul 0.60 ms in 6 calls, relu 0.20 ms in 20 calls"));
  s.profiled_step.short_seconds = 0.0004;
  CHECK(!has_topic(advise(quiet_run(), s), "ops"));
}

TEST_CASE("utilisation and memory headroom are reported when known", "[report]") {
  RunTotals t = quiet_run();
  t.flops = 4.0e9;  // over 0.4 s: 10 GFLOP/s
  RunSetup s = cpu_setup();
  s.peak_flops = 400e9;
  s.memory_capacity = 1ll << 30;
  const std::string report = format_report(t, s);
  CHECK(contains(report, "10.0 GFLOP/s achieved, 2.5% of the device's 400.0 GFLOP/s f32 peak"));
  CHECK(contains(report, "peak 700.0 MiB on cpu of 1.0 GiB (68.4%; headroom 324.0 MiB)"));
}

TEST_CASE("the CPU's f32 peak is measured once per thread count", "[report]") {
  const double one = cpu_f32_peak(1);
  // A CPU with FMA does 8 or 16 lanes of them per instruction at well over 250 MHz; without, the peak is unknown.
  if (__builtin_cpu_supports("fma"))
    CHECK(one > 4e9);
  else
    CHECK(one == 0.0);
  CHECK(cpu_f32_peak(1) == one);  // remembered, not measured again
  const DevicePeaks peaks = device_peaks(kiln::Device::cpu(), 1);
  CHECK(peaks.f32_flops == one);
  CHECK(peaks.memory_bytes == 0);
}

TEST_CASE("a profile's op calls are summarised for the ops advice", "[report]") {
  auto call = [](std::string name, int64_t total_ns, int64_t children_ns) {
    kiln::ProfileEvent e;
    e.name = std::move(name);
    e.end_ns = total_ns;
    e.children_ns = children_ns;
    return e;
  };
  std::vector<kiln::ProfileEvent> events = {call("add", 5'000, 0), call("add", 7'000, 0),
                                            call("linear", 300'000, 100'000), call("matmul", 100'000, 0),
                                            call("relu", 10'000, 0)};
  kiln::ProfileEvent span = call("step 3", 1'000'000, 0);
  span.span = true;
  events.push_back(span);
  const OpCallSummary s = summarise_op_calls(events);
  CHECK(s.calls == 5);  // the span is no op call
  CHECK(s.seconds == Approx(322e-6));
  CHECK(s.short_calls == 3);
  CHECK(s.short_seconds == Approx(22e-6));
  REQUIRE(s.top_ops.size() == 3);
  CHECK(s.top_ops[0].name == "linear");
  CHECK(s.top_ops[0].seconds == Approx(200e-6));
  CHECK(s.top_ops[1].name == "matmul");
  CHECK(s.top_ops[2].name == "add");
  CHECK(s.top_ops[2].calls == 2);
}
