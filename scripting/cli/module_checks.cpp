#include "module_checks.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>

namespace kiln::cli {
namespace {

// The conventions of kiln's own gradient checks.
constexpr double kEps = 1e-6;
constexpr double kGradAtol = 1e-5;
constexpr double kGradRtol = 1e-3;
// A GPU's f64 results differ from the CPU's only by the order of sums.
constexpr double kDeviceAtol = 1e-9;
constexpr double kDeviceRtol = 1e-7;
// Finite differences cost two forwards per element: a sample suffices.
constexpr int64_t kMaxCheckedElements = 64;
constexpr uint64_t kWeightSeed = 7;

Outcome fail(const std::string& what) { return {Verdict::kFail, what + ": " + kiln_last_error()}; }

// A call refused for want of a kernel (an op without one for the GPU or for
// f64) is a skip with the reason; any other failure is a failure.
Outcome refused(kiln_status status, const std::string& what) {
  if (status != KILN_ERR_UNSUPPORTED) return fail(what);
  return {Verdict::kSkip, what + ": " + kiln_last_error()};
}

std::string number(double v) {
  std::ostringstream out;
  out.precision(9);
  out << v;
  return out.str();
}

int64_t numel_of(const kiln_tensor* t) {
  int64_t n = 0;
  return kiln_tensor_numel(t, &n) == KILN_OK ? n : -1;
}

// The elements of any tensor, on any device, converted to f64.
std::optional<std::vector<double>> read_f64(kiln_runtime* rt, const kiln_tensor* t) {
  int rank = 0;
  int64_t dims[KILN_MAX_DIMS];
  kiln_tensor* copy = nullptr;
  if (kiln_tensor_rank(t, &rank) != KILN_OK || kiln_tensor_shape(t, dims, KILN_MAX_DIMS) != KILN_OK ||
      kiln_tensor_empty(rt, dims, rank, KILN_F64, KILN_DEVICE_CPU, 0, &copy) != KILN_OK)
    return std::nullopt;
  const TensorPtr owned = tensor_ptr(copy);
  std::vector<double> values(static_cast<size_t>(numel_of(t)));
  if (kiln_tensor_assign(copy, t) != KILN_OK ||
      kiln_tensor_read(copy, values.data(), values.size() * sizeof(double)) != KILN_OK)
    return std::nullopt;
  return values;
}

std::vector<double> weights(size_t n) {
  std::mt19937_64 engine(kWeightSeed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> w(n);
  for (double& v : w) v = dist(engine);
  return w;
}

// A tensor whose gradient is checked, with the name it is reported by.
struct Checked {
  kiln_tensor* tensor;  // an input (the caller's) or a parameter (the module's)
  std::string name;
};

std::vector<Checked> checked_tensors(kiln_module* module, const std::vector<kiln_tensor*>& inputs,
                                     std::vector<TensorPtr>* parameters) {
  std::vector<Checked> list;
  for (size_t i = 0; i < inputs.size(); ++i) list.push_back({inputs[i], "input " + std::to_string(i)});
  size_t count = 0;
  kiln_module_parameter_count(module, &count);
  for (size_t p = 0; p < count; ++p) {
    const char* name = nullptr;
    kiln_tensor* t = nullptr;
    if (kiln_module_parameter(module, p, &name, &t) != KILN_OK) continue;
    parameters->push_back(tensor_ptr(t));
    list.push_back({t, std::string("parameter ") + name});
  }
  return list;
}

// Makes the inputs require grad for one backward, and undoes it on every
// way out, so that the finite-difference forwards record nothing.
class InputsRequireGrad {
 public:
  explicit InputsRequireGrad(const std::vector<kiln_tensor*>& inputs) : inputs_(inputs) {
    for (kiln_tensor* in : inputs_) kiln_tensor_set_requires_grad(in, 1);
  }
  ~InputsRequireGrad() {
    for (kiln_tensor* in : inputs_) kiln_tensor_set_requires_grad(in, 0);
  }
  InputsRequireGrad(const InputsRequireGrad&) = delete;
  InputsRequireGrad& operator=(const InputsRequireGrad&) = delete;

 private:
  const std::vector<kiln_tensor*>& inputs_;
};

// Output 0 of the module into *out; the others (an LSTM's final states)
// are dropped: every check looks at output 0.
kiln_status forward_output0(kiln_module* module, const std::vector<kiln_tensor*>& inputs, kiln_tensor** out) {
  constexpr size_t kMaxOutputs = 16;
  kiln_tensor* outputs[kMaxOutputs] = {};
  size_t n = 0;
  const kiln_status status = kiln_module_forward(module, inputs.data(), inputs.size(), outputs, kMaxOutputs, &n);
  if (status != KILN_OK) return status;
  for (size_t i = 1; i < n; ++i) kiln_tensor_release(outputs[i]);
  *out = outputs[0];
  return KILN_OK;
}

// Output 0 and the backward of sum(w * output 0) into every checked tensor
// (zeros where backward left none).
struct Gradients {
  std::vector<double> output;
  std::vector<std::vector<double>> grads;
};

std::optional<Gradients> analytic(kiln_runtime* rt, kiln_module* module, const std::vector<kiln_tensor*>& inputs,
                                  const std::vector<Checked>& checked, Outcome* problem) {
  const InputsRequireGrad requiring(inputs);
  for (const Checked& c : checked) kiln_tensor_zero_grad(c.tensor);
  kiln_tensor* out = nullptr;
  if (const kiln_status status = forward_output0(module, inputs, &out); status != KILN_OK) {
    *problem = refused(status, "forward");
    return std::nullopt;
  }
  const TensorPtr output = tensor_ptr(out);
  kiln_dtype dtype{};
  int requires_grad = 0;
  kiln_tensor_dtype(out, &dtype);
  kiln_tensor_requires_grad(out, &requires_grad);
  if (dtype != KILN_F64 || !requires_grad) {
    *problem = {Verdict::kSkip, dtype != KILN_F64 ? "output 0 is not floating point for f64 inputs"
                                                  : "output 0 carries no gradient (no backward)"};
    return std::nullopt;
  }
  Gradients result;
  auto values = read_f64(rt, out);
  int rank = 0;
  int64_t dims[KILN_MAX_DIMS];
  kiln_tensor* seed = nullptr;
  const std::vector<double> w = weights(values ? values->size() : 0);
  if (!values || kiln_tensor_rank(out, &rank) != KILN_OK || kiln_tensor_shape(out, dims, KILN_MAX_DIMS) != KILN_OK ||
      kiln_tensor_from_data(rt, w.data(), w.size() * sizeof(double), dims, rank, KILN_F64, &seed) != KILN_OK) {
    *problem = fail("reading output 0");
    return std::nullopt;
  }
  const TensorPtr seed_owned = tensor_ptr(seed);
  kiln_tensor* seed_here = seed;
  kiln_device_type device{};
  int index = 0;
  kiln_tensor_device(out, &device, &index);
  if (kiln_tensor_to(seed, device, index, &seed_here) != KILN_OK) {
    *problem = fail("moving the output's weights");
    return std::nullopt;
  }
  const TensorPtr seed_moved = tensor_ptr(seed_here);
  if (const kiln_status status = kiln_backward(rt, out, seed_here, 0); status != KILN_OK) {
    *problem = refused(status, "backward");
    return std::nullopt;
  }
  result.output = std::move(*values);
  for (const Checked& c : checked) {
    kiln_tensor* grad = nullptr;
    if (kiln_tensor_grad(c.tensor, &grad) != KILN_OK) {
      *problem = fail("reading the gradient of " + c.name);
      return std::nullopt;
    }
    const TensorPtr owned = tensor_ptr(grad);
    auto g = grad ? read_f64(rt, grad) : std::vector<double>(size_t(numel_of(c.tensor)), 0.0);
    if (!g) {
      *problem = fail("reading the gradient of " + c.name);
      return std::nullopt;
    }
    result.grads.push_back(std::move(*g));
  }
  return result;
}

// sum(w * output 0) without recording gradients; NaN when the forward fails.
double objective(kiln_runtime* rt, kiln_module* module, const std::vector<kiln_tensor*>& inputs) {
  const TensorPtr out = forward_no_grad(rt, module, inputs);
  const auto values = out ? read_f64(rt, out.get()) : std::nullopt;
  if (!values) return NAN;
  const std::vector<double> w = weights(values->size());
  double sum = 0;
  for (size_t i = 0; i < w.size(); ++i) sum += w[i] * (*values)[i];
  return sum;
}

bool close(double actual, double expected, double atol, double rtol) {
  return std::fabs(actual - expected) <= atol + rtol * std::fabs(expected);
}

}  // namespace

TensorPtr tensor_ptr(kiln_tensor* t) { return TensorPtr(t, &kiln_tensor_release); }
ModulePtr module_ptr(kiln_module* m) { return ModulePtr(m, &kiln_module_release); }

TensorPtr random_input(kiln_runtime* rt, const std::vector<int64_t>& shape, uint64_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> dist(0.5, 1.5);
  std::vector<double> values(static_cast<size_t>(n));
  for (double& v : values) v = dist(engine);
  kiln_tensor* t = nullptr;
  kiln_tensor_from_data(rt, values.data(), values.size() * sizeof(double), shape.data(), int(shape.size()), KILN_F64,
                        &t);
  return tensor_ptr(t);
}

TensorPtr forward_no_grad(kiln_runtime* rt, kiln_module* module, const std::vector<kiln_tensor*>& inputs) {
  kiln_tensor* out = nullptr;
  if (kiln_no_grad_begin(rt) != KILN_OK) return tensor_ptr(nullptr);
  const kiln_status status = forward_output0(module, inputs, &out);
  kiln_no_grad_end(rt);
  return tensor_ptr(status == KILN_OK ? out : nullptr);
}

Outcome check_gradients(kiln_runtime* rt, kiln_module* module, const std::vector<kiln_tensor*>& inputs) {
  std::vector<TensorPtr> parameters;
  const std::vector<Checked> checked = checked_tensors(module, inputs, &parameters);
  Outcome problem{Verdict::kPass, ""};
  const auto exact = analytic(rt, module, inputs, checked, &problem);
  if (!exact) return problem;
  int64_t compared = 0;
  for (size_t c = 0; c < checked.size(); ++c) {
    void* data = nullptr;
    if (kiln_tensor_data(checked[c].tensor, &data) != KILN_OK) return fail("writing into " + checked[c].name);
    double* values = static_cast<double*>(data);
    const int64_t n = numel_of(checked[c].tensor);
    const int64_t step = std::max<int64_t>(1, n / kMaxCheckedElements);
    for (int64_t i = 0; i < n; i += step, ++compared) {
      const double original = values[i];
      values[i] = original + kEps;
      const double plus = objective(rt, module, inputs);
      values[i] = original - kEps;
      const double minus = objective(rt, module, inputs);
      values[i] = original;
      const double numeric = (plus - minus) / (2 * kEps);
      const double backward = exact->grads[c][size_t(i)];
      if (!close(backward, numeric, kGradAtol, kGradRtol))
        return {Verdict::kFail, checked[c].name + " element " + std::to_string(i) + ": backward " + number(backward) +
                                    ", finite differences " + number(numeric)};
    }
  }
  return {Verdict::kPass, std::to_string(compared) + " values within atol " + number(kGradAtol) + " + rtol " +
                              number(kGradRtol)};
}

Outcome check_on_device(kiln_runtime* rt, kiln_module* module, const std::vector<kiln_tensor*>& inputs,
                        const DeviceTarget& device) {
  if (!device.enabled) return {Verdict::kSkip, device.skipped_because};
  std::vector<TensorPtr> parameters;
  const std::vector<Checked> cpu_checked = checked_tensors(module, inputs, &parameters);
  Outcome problem{Verdict::kPass, ""};
  const auto cpu = analytic(rt, module, inputs, cpu_checked, &problem);
  if (!cpu) return problem;
  if (const kiln_status status = kiln_module_to(module, KILN_DEVICE_CUDA, device.index); status != KILN_OK)
    return refused(status, "moving the module");
  std::vector<TensorPtr> moved;
  std::vector<kiln_tensor*> gpu_inputs;
  for (kiln_tensor* in : inputs) {
    kiln_tensor *copy = nullptr, *leaf = nullptr;
    if (kiln_tensor_to(in, KILN_DEVICE_CUDA, device.index, &copy) != KILN_OK) return fail("moving an input");
    const TensorPtr owned = tensor_ptr(copy);
    if (kiln_tensor_detach(copy, &leaf) != KILN_OK) return fail("moving an input");
    moved.push_back(tensor_ptr(leaf));
    gpu_inputs.push_back(leaf);
  }
  std::vector<TensorPtr> gpu_parameters;
  const std::vector<Checked> gpu_checked = checked_tensors(module, gpu_inputs, &gpu_parameters);
  const auto gpu = analytic(rt, module, gpu_inputs, gpu_checked, &problem);
  if (!gpu) return problem;
  std::vector<std::pair<std::string, const std::vector<double>*>> pairs = {{"output 0", &gpu->output}};
  for (size_t c = 0; c < gpu_checked.size(); ++c)
    pairs.push_back({"gradient of " + gpu_checked[c].name, &gpu->grads[c]});
  for (size_t k = 0; k < pairs.size(); ++k) {
    const std::vector<double>& expected = k == 0 ? cpu->output : cpu->grads[k - 1];
    const std::vector<double>& actual = *pairs[k].second;
    for (size_t i = 0; i < actual.size(); ++i)
      if (!close(actual[i], expected[i], kDeviceAtol, kDeviceRtol))
        return {Verdict::kFail, pairs[k].first + " element " + std::to_string(i) + ": cuda " + number(actual[i]) +
                                    ", cpu " + number(expected[i])};
  }
  return {Verdict::kPass, "forward and backward agree with the CPU"};
}

Outcome check_weights_round_trip(kiln_runtime* rt, kiln_module* module, kiln_module* fresh,
                                 const std::vector<kiln_tensor*>& inputs, const std::string& file_stem) {
  const std::string name = "kiln-plugin-check-" + std::to_string(getpid()) + "-" + file_stem + ".safetensors";
  const std::filesystem::path path = std::filesystem::temp_directory_path() / name;
  const bool saved = kiln_weights_save(module, path.c_str()) == KILN_OK;
  const bool loaded = saved && kiln_weights_load(fresh, path.c_str(), 1) == KILN_OK;
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  if (!saved) return fail("saving the weights");
  if (!loaded) return fail("loading the weights strictly into a new instance");
  const TensorPtr before = forward_no_grad(rt, module, inputs);
  const TensorPtr after = forward_no_grad(rt, fresh, inputs);
  if (!before || !after) return fail("forward");
  const auto a = read_f64(rt, before.get());
  const auto b = read_f64(rt, after.get());
  if (!a || !b) return fail("reading the outputs");
  if (a->size() != b->size() || std::memcmp(a->data(), b->data(), a->size() * sizeof(double)) != 0)
    return {Verdict::kFail, "the reloaded instance's output differs from the original's"};
  return {Verdict::kPass, "reloaded instance gives bit-identical outputs"};
}

}  // namespace kiln::cli
