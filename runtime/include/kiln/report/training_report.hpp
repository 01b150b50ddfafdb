// The training report: where a run's step time went, its throughput and
// memory, and advice drawn from them. Each advice rule states its evidence
// (the numbers that made it fire) and fires only when that evidence holds;
// the rules read plain numbers, so they are tested with made-up runs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/profiler/profiler.hpp"

namespace kiln::report {

// Seconds of one step, or of many added up, by phase (kiln_step_metrics).
struct StepSplit {
  double input_wait = 0.0;
  double forward = 0.0;
  double backward = 0.0;
  double communication = 0.0;
  double optimizer = 0.0;
  double other = 0.0;

  double total() const { return input_wait + forward + backward + communication + optimizer + other; }
  StepSplit& operator+=(const StepSplit& s);
};

// A run's steps added up: the report leaves out the first step, whose
// one-time work (building kernels, filling caches) would mislead.
struct RunTotals {
  int64_t steps = 0;
  int64_t samples = 0;
  StepSplit seconds;
  double flops = 0.0;       // arithmetic of the counted steps; 0: unknown
  int64_t peak_bytes = 0;   // the highest step peak on the model's device
};

// One op of a per-op profile of a step: its name and its self time.
struct OpShare {
  std::string name;
  int64_t calls = 0;
  double seconds = 0.0;
};

// A call this short is dominated by the cost of calling it.
inline constexpr double kShortOpSeconds = 20e-6;

// The op calls of a profiled step.
struct OpCallSummary {
  std::vector<OpShare> top_ops;  // the three with the most self time, largest first
  int64_t calls = 0;
  double seconds = 0.0;          // self time of all calls
  int64_t short_calls = 0;       // calls under kShortOpSeconds
  double short_seconds = 0.0;    // and their self time
};

// The op calls of a profile (its spans left out).
OpCallSummary summarise_op_calls(std::span<const ProfileEvent> events);

// What the report knows of the run's setup.
struct RunSetup {
  std::string device = "cpu";  // where the model trains: "cpu", "cuda:0"
  bool on_gpu = false;
  int loader_workers = 0;      // threads making batches; 0: the training thread makes them
  int loader_prefetch = 0;     // batches made ahead
  int cpu_threads = 1;         // hardware threads of the machine
  int64_t batch_size = 0;      // per step and process
  std::string precision = "f32";      // "f32", "bf16" or "f16"
  std::string fast_low_precision;     // the device's faster low-precision type ("bf16"), "" when none
  double low_precision_speedup = 0.0; // its peak over f32's, when known (0: unknown)
  double peak_flops = 0.0;            // of the device at the run's precision; 0: unknown
  int64_t memory_capacity = 0;        // bytes the model's device can give the run; 0: unknown
  int world_size = 1;
  OpCallSummary profiled_step;  // of one step; no calls when none was profiled
};

struct Advice {
  std::string topic;  // "input", "memory", "precision", "communication", "ops"
  std::string text;   // what to do, with the evidence
};

// The rules, in the order of the report.
std::vector<Advice> advise(const RunTotals& totals, const RunSetup& setup);

// The report: the split, throughput, utilisation and memory as a short
// table, then the advice (or a line saying there is none). A run with no
// counted step says so.
std::string format_report(const RunTotals& totals, const RunSetup& setup);

}  // namespace kiln::report
