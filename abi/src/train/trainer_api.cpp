// The trainer through the C API: creation, release, one step, a whole run,
// an evaluation, and saving and loading its state.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "checkpoint/training_state.hpp"
#include "data/loader.hpp"
#include "guard.hpp"
#include "kiln/error.hpp"
#include "module/module_handle.hpp"
#include "train/batch_loss.hpp"
#include "train/callback.hpp"
#include "train/trainer.hpp"
#include "text_out.hpp"

namespace {

// guarded() for the trainer: a failure a callback reported is returned with
// the callback's own status and message, as it recorded them.
template <class Body>
kiln_status trainer_guarded(const char* function, Body&& body) noexcept {
  try {
    body();
    return KILN_OK;
  } catch (const kiln::train::CallbackFailure& failure) {
    return kiln::abi::set_error(kiln_status(failure.status()), "", failure.what());
  } catch (...) {
    return kiln::abi::error_from_current_exception(function);
  }
}

// Output structs are written up to their `size`, so that a caller built
// with an older header gets the fields it knows.
template <class Metrics>
void check_output_size(const Metrics* out, const char* name, const char* type) {
  KILN_CHECK(!out || out->size > 0, kiln::Status::invalid_argument, name, "->size is 0; set it to sizeof(", type,
             ")");
}

template <class Metrics>
void copy_out(const Metrics& m, Metrics* out) {
  if (!out) return;
  const size_t size = out->size;
  std::memcpy(out, &m, std::min(size, sizeof m));
  out->size = size;
}

// An op of `rt` for kiln_evaluate; an unknown name fails with the close
// matches kiln_op_find gives.
const kiln_op* find_op(kiln_runtime* rt, const char* name, const char* purpose) {
  const kiln_op* op = nullptr;
  kiln::train::check_call(kiln_op_find(rt, name, &op), purpose);
  return op;
}

}  // namespace

extern "C" {

kiln_status kiln_trainer_create(kiln_runtime* rt, const kiln_trainer_options* options, kiln_trainer** out) {
  KILN_REQUIRE(rt, options, out);
  return trainer_guarded(__func__, [&] { *out = kiln::train::make_trainer(rt, *options).release(); });
}

void kiln_trainer_release(kiln_trainer* trainer) { delete trainer; }

kiln_status kiln_trainer_step(kiln_trainer* trainer, kiln_step_metrics* metrics, int* done) {
  KILN_REQUIRE(trainer, done);
  return trainer_guarded(__func__, [&] {
    check_output_size(metrics, "metrics", "kiln_step_metrics");
    if (kiln::train::training_done(*trainer)) {
      *done = 1;
      return;
    }
    const kiln_step_metrics m = kiln::train::train_step(*trainer, false);
    copy_out(m, metrics);
    *done = 0;
  });
}

kiln_status kiln_trainer_run(kiln_trainer* trainer) {
  KILN_REQUIRE(trainer);
  return trainer_guarded(__func__, [&] {
    while (!kiln::train::training_done(*trainer)) kiln::train::train_step(*trainer, true);
    if (trainer->trace) trainer->trace->finish();
    if (trainer->config.print_report && trainer->rank == 0) {
      const std::string report = trainer->report.text(*trainer);
      std::fputs(report.c_str(), stderr);
      std::fflush(stderr);
    }
  });
}

kiln_status kiln_trainer_report(kiln_trainer* trainer, char* buffer, size_t capacity, size_t* length) {
  KILN_REQUIRE(trainer);
  return trainer_guarded(__func__, [&] {
    kiln::abi::check_text_buffer(buffer, capacity);
    kiln::abi::copy_text_out(trainer->report.text(*trainer), buffer, capacity, length);
  });
}

kiln_status kiln_trainer_evaluate(kiln_trainer* trainer, kiln_loader* loader, kiln_eval_metrics* out) {
  KILN_REQUIRE(trainer, out);
  return trainer_guarded(__func__, [&] {
    check_output_size(out, "out", "kiln_eval_metrics");
    kiln_loader* chosen = loader ? loader : trainer->config.validation.get();
    KILN_CHECK(chosen, kiln::Status::invalid_argument,
               "no loader given and the trainer has no validation loader (options->validation)");
    copy_out(kiln::train::evaluate(*trainer, chosen), out);
  });
}

kiln_status kiln_evaluate(kiln_module* model, kiln_loader* loader, const char* loss, const char* input_field,
                          const char* target_field, kiln_eval_metrics* out) {
  KILN_REQUIRE(model, loader, out);
  return trainer_guarded(__func__, [&] {
    check_output_size(out, "out", "kiln_eval_metrics");
    kiln_runtime* rt = model->runtime;
    KILN_CHECK(loader->source->object.runtime() == rt, kiln::Status::invalid_argument,
               "'loader' belongs to another runtime than 'model'");
    const char* loss_name = loss ? loss : "cross_entropy";
    const kiln::train::ModelLoss m{rt,
                                   model,
                                   find_op(rt, loss_name, "the loss op"),
                                   find_op(rt, "cast", "reading outputs"),
                                   loss_name,
                                   input_field ? input_field : "input",
                                   target_field ? target_field : "target",
                                   KILN_F32};
    copy_out(kiln::train::evaluate(m, loader), out);
  });
}

kiln_status kiln_trainer_save(kiln_trainer* trainer, const char* path) {
  KILN_REQUIRE(trainer, path);
  return trainer_guarded(__func__, [&] { kiln::train::save_training_state(*trainer, path); });
}

kiln_status kiln_trainer_load(kiln_trainer* trainer, const char* path) {
  KILN_REQUIRE(trainer, path);
  return trainer_guarded(__func__, [&] { kiln::train::load_training_state(*trainer, path); });
}

}  // extern "C"
