// Memory planning through the C API: an estimate of what training a model
// at one batch size holds, and the search for the largest batch that fits.
// Both are made of trial steps (train/trial_step.hpp).
#include <algorithm>
#include <cstring>

#include "convert.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "module/module_handle.hpp"
#include "module/module_tree.hpp"
#include "optim/optimizer_handle.hpp"
#include "train/trial_step.hpp"

using kiln::Status;
using kiln::abi::guarded;
using kiln::train::TrialResult;
using kiln::train::TrialSpec;

namespace {

constexpr int64_t kDefaultMaxBatchSize = 65536;

// Output structs are written up to their `size`, so that a caller built
// with an older header gets the fields it knows.
template <class Result>
void copy_out(const Result& r, Result* out, const char* type) {
  KILN_CHECK(out->size > 0, Status::invalid_argument, "out->size is 0; set it to sizeof(", type, ")");
  const size_t size = out->size;
  std::memcpy(out, &r, std::min(size, sizeof r));
  out->size = size;
}

int64_t bytes_of(const std::vector<kiln::abi::TreeTensor>& tensors) {
  int64_t bytes = 0;
  for (const kiln::abi::TreeTensor& t : tensors) bytes += int64_t(t.tensor->tensor.nbytes());
  return bytes;
}

// Bytes of the state `opt` holds already (the trial makes only the rest).
int64_t existing_optimizer_state(const kiln_optimizer* opt) {
  int64_t bytes = 0;
  if (!opt) return bytes;
  for (const kiln::abi::OptimizedParameter& p : opt->params)
    for (size_t i = 0; i < p.state.tensors.size(); ++i) bytes += int64_t(p.state.tensors[i]->tensor.nbytes());
  return bytes;
}

// Why a try did not fit, for the error when even a batch of 1 does not.
std::string why_not(const TrialResult& r, int64_t limit) {
  if (r.out_of_memory) return r.message;
  return kiln::str_cat("its peak of ", r.peak_bytes, " bytes is over options->limit_bytes (", limit, ")");
}

}  // namespace

extern "C" {

kiln_status kiln_memory_estimate_get(kiln_module* model, const int64_t* input_shape, int input_rank,
                                     int64_t batch_size, const kiln_memory_plan_options* options,
                                     kiln_memory_estimate* out) {
  KILN_REQUIRE(model, out);
  return guarded(__func__, [&] {
    KILN_CHECK(batch_size > 0, Status::invalid_argument, "batch_size is ", batch_size, "; expected at least 1");
    const TrialSpec spec = kiln::train::make_trial_spec(model, input_shape, input_rank, options);
    const TrialResult r = kiln::train::run_trial(spec, batch_size);
    KILN_CHECK(!r.out_of_memory, Status::out_of_memory, "the trial step at batch size ", batch_size,
               " ran out of memory: ", r.message);
    kiln_memory_estimate e{};
    e.size = sizeof e;
    e.parameter_bytes = bytes_of(kiln::abi::tree_parameters(*model));
    e.buffer_bytes = bytes_of(kiln::abi::tree_buffers(*model));
    e.gradient_bytes = r.gradient_bytes;
    e.optimizer_bytes = r.optimizer_bytes + existing_optimizer_state(spec.optimizer);
    e.activation_bytes = std::max<int64_t>(0, r.peak_bytes - r.start_bytes - r.optimizer_bytes - r.gradient_bytes);
    e.total_bytes = e.parameter_bytes + e.buffer_bytes + e.gradient_bytes + e.optimizer_bytes + e.activation_bytes;
    copy_out(e, out, "kiln_memory_estimate");
  });
}

kiln_status kiln_find_batch_size(kiln_module* model, const int64_t* input_shape, int input_rank,
                                 const kiln_memory_plan_options* options, kiln_batch_size_result* out) {
  KILN_REQUIRE(model, out);
  return guarded(__func__, [&] {
    const TrialSpec spec = kiln::train::make_trial_spec(model, input_shape, input_rank, options);
    int64_t limit = 0, max_batch = kDefaultMaxBatchSize;
    if (options && KILN_HAS_FIELD(options, limit_bytes)) limit = options->limit_bytes;
    if (options && KILN_HAS_FIELD(options, max_batch_size) && options->max_batch_size != 0)
      max_batch = options->max_batch_size;
    KILN_CHECK(limit >= 0, Status::invalid_argument, "options->limit_bytes is ", limit,
               "; expected a number of bytes, or 0 for no limit");
    KILN_CHECK(max_batch > 0, Status::invalid_argument, "options->max_batch_size is ", max_batch,
               "; expected at least 1, or 0 for 65536");

    kiln_batch_size_result result{};
    result.size = sizeof result;
    TrialResult last;
    const auto fits = [&](int64_t batch) {
      last = kiln::train::run_trial(spec, batch);
      ++result.tries;
      const bool ok = !last.out_of_memory && (limit == 0 || last.peak_bytes <= limit);
      if (ok) result.peak_bytes = last.peak_bytes;  // every try that fits becomes `good` below
      return ok;
    };
    KILN_CHECK(fits(1), Status::out_of_memory, "even a batch of 1 does not fit: ", why_not(last, limit));
    // Doubling until a batch does not fit, then halving the gap between the
    // largest that fit and the smallest that did not.
    int64_t good = 1, bad = 0;
    while (good < max_batch && bad == 0) {
      const int64_t next = std::min(good * 2, max_batch);
      if (fits(next))
        good = next;
      else
        bad = next;
    }
    while (bad - good > 1) {
      const int64_t middle = good + (bad - good) / 2;
      if (fits(middle))
        good = middle;
      else
        bad = middle;
    }
    result.batch_size = good;
    copy_out(result, out, "kiln_batch_size_result");
  });
}

}  // extern "C"
