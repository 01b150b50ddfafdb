// Evaluation: one pass over a loader in eval mode without recording
// gradients, giving the mean loss over the samples and, for class-index
// targets, the accuracy of the argmax over the output's last dimension.
#include <chrono>
#include <vector>

#include "kiln/error.hpp"
#include "train/batch_loss.hpp"
#include "train/callback.hpp"
#include "train/trainer.hpp"

namespace kiln::train {
namespace {

// Eval mode and no gradients while it lives; the model's mode and the grad
// mode are restored however the evaluation ends.
class EvalScope {
 public:
  EvalScope(kiln_runtime* rt, kiln_module* model) : rt_(rt), model_(model) {
    check_call(kiln_module_training(model, &was_training_), "reading the model's mode");
    check_call(kiln_no_grad_begin(rt), "turning gradient recording off");
    const kiln_status status = kiln_module_set_training(model, 0);
    if (status != KILN_OK) kiln_no_grad_end(rt);
    check_call(status, "putting the model in eval mode");
  }
  ~EvalScope() {
    kiln_module_set_training(model_, was_training_);
    kiln_no_grad_end(rt_);
  }
  EvalScope(const EvalScope&) = delete;
  EvalScope& operator=(const EvalScope&) = delete;

 private:
  kiln_runtime* rt_;
  kiln_module* model_;
  int was_training_ = 1;
};

struct Tally {
  double loss_sum = 0.0;  // batch mean loss times batch size
  int64_t samples = 0;
  bool countable = true;  // every target so far was a class index per row of scores
  int64_t rows = 0;
  int64_t correct = 0;
};

bool is_class_index(kiln_dtype d) { return d == KILN_I64 || d == KILN_I32 || d == KILN_U8; }

// The elements of `t`, converted to `dtype`, read to the CPU.
template <class T>
std::vector<T> read_as(const ModelLoss& m, kiln_tensor* t, kiln_dtype dtype) {
  const kiln_attr attr = kiln_attr_dtype("dtype", dtype);
  const TensorRef converted = call_op(m.runtime, m.cast, {t}, &attr, 1, "reading an evaluation batch");
  int64_t n = 0;
  check_call(kiln_tensor_numel(converted.get(), &n), "reading an evaluation batch");
  std::vector<T> values(static_cast<size_t>(n));
  check_call(kiln_tensor_read(converted.get(), values.data(), values.size() * sizeof(T)),
             "reading an evaluation batch");
  return values;
}

// Adds the rows of `output` (over its last dimension) whose first largest
// score is at the class `target` gives; marks the tally uncountable when
// the target is not one class index per row.
void count_correct(const ModelLoss& m, kiln_tensor* output, kiln_tensor* target, Tally& tally) {
  kiln_dtype target_dtype = KILN_F32;
  int rank = 0;
  int64_t dims[KILN_MAX_DIMS] = {}, target_numel = 0;
  check_call(kiln_tensor_dtype(target, &target_dtype), "reading the target");
  check_call(kiln_tensor_numel(target, &target_numel), "reading the target");
  check_call(kiln_tensor_rank(output, &rank), "reading the output");
  check_call(kiln_tensor_shape(output, dims, KILN_MAX_DIMS), "reading the output");
  const int64_t classes = rank > 0 ? dims[rank - 1] : 0;
  if (!is_class_index(target_dtype) || classes == 0) {
    tally.countable = false;
    return;
  }
  const std::vector<double> scores = read_as<double>(m, output, KILN_F64);
  const int64_t rows = int64_t(scores.size()) / classes;
  if (rows != target_numel) {
    tally.countable = false;
    return;
  }
  const std::vector<int64_t> labels = read_as<int64_t>(m, target, KILN_I64);
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = scores.data() + r * classes;
    int64_t best = 0;
    for (int64_t k = 1; k < classes; ++k)
      if (row[k] > row[best]) best = k;
    tally.correct += best == labels[size_t(r)] ? 1 : 0;
  }
  tally.rows += rows;
}

Tally evaluation_pass(const ModelLoss& m, kiln_loader* loader) {
  const EvalScope scope(m.runtime, m.model);
  // Always epoch 0: every evaluation sees the same batches.
  check_call(kiln_loader_start_epoch(loader, 0), "starting the evaluation loader");
  Tally tally;
  for (;;) {
    kiln_example* next = nullptr;
    check_call(kiln_loader_next(loader, &next), "taking a batch from the evaluation loader");
    if (!next) break;
    const ExamplePtr batch(next);
    const BatchLoss b = forward_loss(m, batch.get());
    tally.loss_sum += loss_value(m, b) * double(b.samples);
    tally.samples += b.samples;
    if (tally.countable) count_correct(m, b.output.get(), b.target.get(), tally);
  }
  KILN_CHECK(tally.samples > 0, Status::invalid_argument, "the evaluation loader gave no batch");
  return tally;
}

}  // namespace

kiln_eval_metrics evaluate(const ModelLoss& m, kiln_loader* loader) {
  const auto start = std::chrono::steady_clock::now();
  const Tally tally = evaluation_pass(m, loader);
  kiln_eval_metrics metrics{};
  metrics.size = sizeof metrics;
  metrics.samples = tally.samples;
  metrics.loss = tally.loss_sum / double(tally.samples);
  metrics.accuracy = tally.countable && tally.rows > 0 ? double(tally.correct) / double(tally.rows) : -1.0;
  metrics.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return metrics;
}

kiln_eval_metrics evaluate(kiln_trainer& t, kiln_loader* loader) {
  KILN_CHECK(loader != t.config.train.get(), Status::invalid_argument,
             "cannot evaluate on the train loader: that would abandon its current epoch; make a second loader "
             "over the same source");
  kiln_eval_metrics m = evaluate(model_loss(t), loader);
  TrainState& s = t.state;
  m.step = s.step;
  // After an epoch's last step, the epoch that step belonged to.
  m.epoch = s.step > 0 ? s.last_step.epoch : s.epoch;
  t.metrics->write(m);
  t.tensorboard->write(m);
  t.progress->eval(m);
  const TrainerConfig& c = t.config;
  if (c.on_eval && run_callback("on_eval", [&] { return c.on_eval(c.user_data, &m); })) s.stop_requested = true;
  return m;
}

}  // namespace kiln::train
