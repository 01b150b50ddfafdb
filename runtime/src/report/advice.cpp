// The advice rules. Each looks at one cause of a slow or wasteful run and
// returns nothing unless the run's numbers show it; the thresholds are the
// points past which acting on the advice is worth a user's time.
#include <algorithm>
#include <cmath>
#include <optional>

#include "kiln/report/training_report.hpp"
#include "report_format.hpp"

namespace kiln::report {
namespace {

// A loader with workers makes batches beside the step: a wait means they
// cannot keep up, and more of them take cores from the model, so only a
// large wait is worth acting on. With none, the training thread makes every
// batch itself: all of that time is on the step's path and one setting moves
// it off, so any share above the noise of step times is worth it.
constexpr double kInputWaitShare = 0.10;     // of the step spent taking batches from workers
constexpr double kSerialInputShare = 0.005;  // of the step spent making batches on the training thread
constexpr double kMemoryUsedShare = 0.40;    // of the device's memory at the peak
constexpr double kMemoryTargetShare = 0.80;  // what a suggested batch may fill
constexpr double kCommunicationShare = 0.10; // of the step spent on reductions after backward
constexpr double kShortOpsShare = 0.50;      // of the op time in calls under kShortOpSeconds

double share(double part, const RunTotals& t) {
  const double total = t.seconds.total();
  return total > 0.0 ? part / total : 0.0;
}

// "4.2 ms of 40.1 ms per step (10.5%)"
std::string per_step(double part, const RunTotals& t) {
  return str_cat(milliseconds(part / double(t.steps)), " of ", milliseconds(t.seconds.total() / double(t.steps)),
                 " per step (", percent(share(part, t)), ")");
}

std::optional<Advice> input_rule(const RunTotals& t, const RunSetup& s) {
  const double input_share = share(t.seconds.input_wait, t);
  if (input_share <= (s.loader_workers == 0 ? kSerialInputShare : kInputWaitShare)) return std::nullopt;
  const std::string evidence = str_cat("taking batches from the loader took ", per_step(t.seconds.input_wait, t));
  if (s.loader_workers == 0) {
    const int workers = std::clamp(s.cpu_threads, 2, 4);
    return Advice{"input", str_cat(evidence, ", made on the training thread (0 loader workers): give the loader ",
                                   workers, " workers (Lua `workers = ", workers, "`, C num_workers, Python "
                                   "num_workers=) so that batches are made while the model trains; expected "
                                   "gain up to ", percent(input_share), " of the step")};
  }
  if (s.loader_workers < s.cpu_threads) {
    const int workers = std::min(s.cpu_threads, 2 * s.loader_workers);
    return Advice{"input", str_cat(evidence, " with ", s.loader_workers, " loader workers and ", s.loader_prefetch,
                                   " batches prefetched: give the loader ", workers, " workers and a prefetch of ",
                                   2 * workers)};
  }
  return Advice{"input", str_cat(evidence, " though the loader's ", s.loader_workers, " workers use all ",
                                 s.cpu_threads, " hardware threads: make the transforms cheaper, or prepare the "
                                 "data once ahead of training (decoded, normalised tensors)")};
}

std::optional<Advice> memory_rule(const RunTotals& t, const RunSetup& s) {
  if (s.memory_capacity <= 0 || t.peak_bytes <= 0 || s.batch_size <= 0) return std::nullopt;
  const double used = double(t.peak_bytes) / double(s.memory_capacity);
  if (used >= kMemoryUsedShare) return std::nullopt;
  // Activations grow with the batch, parameters and optimizer state do
  // not: scaling the whole peak underestimates what fits.
  const int64_t batch = int64_t(std::floor(double(s.batch_size) * kMemoryTargetShare / used));
  if (batch <= s.batch_size) return std::nullopt;
  return Advice{"memory", str_cat("the peak of a step was ", bytes(t.peak_bytes), " of the ",
                                  bytes(s.memory_capacity), " ", s.device, " can give (", percent(used),
                                  "): a batch of about ", batch, " instead of ", s.batch_size,
                                  " would still fit (kiln_find_batch_size, Lua kiln.find_batch_size, measures it)")};
}

std::optional<Advice> precision_rule(const RunTotals&, const RunSetup& s) {
  if (s.precision != "f32" || s.fast_low_precision.empty()) return std::nullopt;
  std::string gain;
  if (s.low_precision_speedup > 1.0)
    gain = str_cat(", whose peak is ", fixed(s.low_precision_speedup, 1), "x f32's");
  return Advice{"precision", str_cat("the run is f32 on ", s.device, ", which has fast ", s.fast_low_precision,
                                     " arithmetic", gain, ": train with precision = \"", s.fast_low_precision,
                                     "\" (autocast; parameters and the optimizer stay f32)")};
}

std::optional<Advice> communication_rule(const RunTotals& t, const RunSetup& s) {
  if (s.world_size <= 1 || share(t.seconds.communication, t) <= kCommunicationShare) return std::nullopt;
  return Advice{"communication",
                str_cat("waiting for the gradient reduction after backward took ", per_step(t.seconds.communication, t),
                        " over ", s.world_size, " processes: larger buckets start reducing earlier and overlap "
                        "more of it with backward (strategy_options.bucket_mb), and a larger batch per process "
                        "makes it a smaller share")};
}

std::optional<Advice> ops_rule(const RunTotals&, const RunSetup& s) {
  const OpCallSummary& p = s.profiled_step;
  if (p.calls == 0 || p.seconds <= 0.0) return std::nullopt;
  const double short_share = p.short_seconds / p.seconds;
  if (short_share <= kShortOpsShare) return std::nullopt;
  std::string top;
  for (size_t i = 0; i < p.top_ops.size(); ++i)
    top += str_cat(i ? ", " : "", p.top_ops[i].name, " ", milliseconds(p.top_ops[i].seconds), " in ",
                   p.top_ops[i].calls, " calls");
  return Advice{"ops", str_cat(p.short_calls, " of the ", p.calls, " op calls of a profiled step "
                               "took under ", fixed(kShortOpSeconds * 1e6, 0), " us each, ",
                               percent(short_share), " of its op time: the cost of calling ops dominates; a "
                               "larger batch gives each call more work (largest: ", top, ")")};
}

}  // namespace

std::vector<Advice> advise(const RunTotals& totals, const RunSetup& setup) {
  std::vector<Advice> advice;
  if (totals.steps <= 0) return advice;
  for (auto rule : {input_rule, memory_rule, precision_rule, communication_rule, ops_rule})
    if (std::optional<Advice> a = rule(totals, setup)) advice.push_back(std::move(*a));
  return advice;
}

}  // namespace kiln::report
