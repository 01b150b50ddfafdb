#include "train/trial_step.hpp"

#include <cstring>
#include <optional>

#include "convert.hpp"
#include "handles.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "kiln/ops/autocast.hpp"
#include "module/module_handle.hpp"
#include "module/module_tree.hpp"
#include "optim/optimizer_handle.hpp"
#include "train/api_call.hpp"

namespace kiln::train {
namespace {

kiln_dtype plan_precision(const char* precision) {
  if (!precision || std::strcmp(precision, "f32") == 0) return KILN_F32;
  if (std::strcmp(precision, "bf16") == 0) return KILN_BF16;
  if (std::strcmp(precision, "f16") == 0) return KILN_F16;
  throw_error(Status::invalid_argument,
              str_cat("options->precision is '", precision, "'; expected \"f32\" (or NULL), \"bf16\" or \"f16\""));
}

// Takes the parameters' gradients away while it lives, and puts them back
// (dropping whatever the trial left) when it goes.
class GradientsPutBack {
 public:
  explicit GradientsPutBack(const std::vector<abi::TreeTensor>& params) {
    for (const abi::TreeTensor& p : params) {
      saved_.emplace_back(p.tensor, p.tensor->tensor.grad());
      p.tensor->tensor.set_grad(Tensor());
    }
  }
  ~GradientsPutBack() {
    for (auto& [param, grad] : saved_) param->tensor.set_grad(grad);
  }
  GradientsPutBack(const GradientsPutBack&) = delete;
  GradientsPutBack& operator=(const GradientsPutBack&) = delete;

 private:
  std::vector<std::pair<kiln_tensor*, Tensor>> saved_;
};

// The random stream, put back where it was when this goes (dropout in the
// trial draws from it).
class RandomPutBack {
 public:
  explicit RandomPutBack(Runtime& rt) : runtime_(rt), state_(rt.generator_state()) {}
  ~RandomPutBack() { runtime_.set_generator_state(state_); }
  RandomPutBack(const RandomPutBack&) = delete;
  RandomPutBack& operator=(const RandomPutBack&) = delete;

 private:
  Runtime& runtime_;
  GeneratorState state_;
};

// The state the optimizer will make for each parameter that has none yet.
std::vector<abi::ParameterState> fresh_optimizer_state(const kiln_optimizer& opt, int64_t* bytes) {
  std::vector<abi::ParameterState> states;
  for (const abi::OptimizedParameter& p : opt.params) {
    if (p.has_state) continue;
    states.push_back(abi::make_parameter_state(opt, p));
    const abi::OwnedTensors& made = states.back().tensors;
    for (size_t i = 0; i < made.size(); ++i) *bytes += int64_t(made[i]->tensor.nbytes());
  }
  return states;
}

// What the loss compares the output with: class 0 for every position of a
// class-index loss, zeros shaped like the output for the others.
Tensor zero_target(Runtime& rt, const TrialSpec& spec, const Tensor& output) {
  if (!spec.class_targets) return rt.full(output.shape(), 0.0, output.dtype(), output.device());
  std::vector<int64_t> dims;
  for (int d = 0; d < output.rank(); ++d)
    if (d != 1 || output.rank() == 1) dims.push_back(output.dim(d));
  return rt.full(Shape(dims), 0.0, DType::i64, output.device());
}

}  // namespace

TrialSpec make_trial_spec(kiln_module* model, const int64_t* input_shape, int input_rank,
                          const kiln_memory_plan_options* options) {
  KILN_CHECK(input_rank >= 0 && input_rank < KILN_MAX_DIMS, Status::invalid_argument, "input_rank is ", input_rank,
             "; expected the rank of one example, 0 to ", KILN_MAX_DIMS - 1);
  KILN_CHECK(input_shape || input_rank == 0, Status::invalid_argument, "input_shape is NULL with rank ", input_rank);
  TrialSpec spec;
  spec.runtime = model->runtime;
  spec.model = model;
  for (int d = 0; d < input_rank; ++d) {
    KILN_CHECK(input_shape[d] > 0, Status::invalid_argument, "input_shape[", d, "] is ", input_shape[d],
               "; expected the size of one example's dimension (> 0)");
    spec.example_shape.push_back(input_shape[d]);
  }
  const char* loss = "cross_entropy";
  if (options) {
    abi::check_struct_size(options->size, "kiln_memory_plan_options");
    if (KILN_HAS_FIELD(options, loss) && options->loss) loss = options->loss;
    if (KILN_HAS_FIELD(options, optimizer)) spec.optimizer = options->optimizer;
    if (KILN_HAS_FIELD(options, precision)) spec.precision = plan_precision(options->precision);
  }
  check_call(kiln_op_find(spec.runtime, loss, &spec.loss), str_cat("options->loss '", loss, "'"));
  spec.class_targets = std::strcmp(loss, "cross_entropy") == 0 || std::strcmp(loss, "nll_loss") == 0;
  KILN_CHECK(!spec.optimizer || spec.optimizer->runtime == spec.runtime, Status::invalid_argument,
             "options->optimizer belongs to another runtime than the model");
  const std::vector<abi::TreeTensor> params = abi::tree_parameters(*model);
  if (!params.empty())
    check_call(kiln_tensor_device(params.front().tensor, &spec.device, &spec.device_index),
               "reading the model's device");
  return spec;
}

TrialResult run_trial(const TrialSpec& spec, int64_t batch_size) {
  kiln_runtime* rt = spec.runtime;
  Runtime& runtime = rt->runtime;
  const Device device = abi::to_device(spec.device, spec.device_index);
  const std::shared_ptr<Allocator>& allocator = runtime.allocator(device);
  const GradientsPutBack gradients(abi::tree_parameters(*spec.model));
  const RandomPutBack random(runtime);
  const GradModeGuard recording(runtime, true);
  TrialResult r;
  allocator->reset_peak();
  r.start_bytes = allocator->stats().current_bytes;
  try {
    const std::vector<abi::ParameterState> optimizer_state =
        spec.optimizer ? fresh_optimizer_state(*spec.optimizer, &r.optimizer_bytes) : std::vector<abi::ParameterState>{};
    std::vector<int64_t> dims{batch_size};
    dims.insert(dims.end(), spec.example_shape.begin(), spec.example_shape.end());
    const TensorRef input = TensorRef::adopt(abi::new_handle(rt, runtime.full(Shape(dims), 0.0, DType::f32, device)));
    TensorRef loss;
    {
      std::optional<AutocastGuard> autocast;
      if (spec.precision != KILN_F32) autocast.emplace(runtime, abi::to_dtype(spec.precision));
      kiln_tensor* in = input.get();
      kiln_tensor* out = nullptr;
      check_call(kiln_module_forward1(spec.model, &in, 1, &out), "forward of the model");
      const TensorRef output = TensorRef::adopt(out);
      const TensorRef target = TensorRef::adopt(abi::new_handle(rt, zero_target(runtime, spec, output->tensor)));
      loss = call_op(rt, spec.loss, {output.get(), target.get()}, nullptr, 0, "the loss");
    }
    check_call(kiln_backward(rt, loss.get(), nullptr, 0), "backward of the loss");
    for (const abi::TreeTensor& p : abi::tree_parameters(*spec.model)) {
      const Tensor grad = p.tensor->tensor.grad();
      if (grad.defined()) r.gradient_bytes += int64_t(grad.nbytes());
    }
  } catch (const Error& e) {
    if (e.status() != Status::out_of_memory) throw;
    r.out_of_memory = true;
    r.message = e.what();
  }
  r.peak_bytes = allocator->stats().peak_bytes;
  return r;
}

}  // namespace kiln::train
