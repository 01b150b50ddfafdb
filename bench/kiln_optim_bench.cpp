// kiln_optim_bench: the time of one optimizer step (AdamW, and SGD with
// momentum) through the C API and the kiln-optim plugin, as a training loop
// calls it, over the parameter lists of two real networks. See
// bench/README.md; bench/torch_optimizer_step.py times PyTorch on the same
// lists.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_timer.hpp"
#include "kiln/kiln.h"
#include "optim_bench_shapes.hpp"

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "kiln_optim_bench: %s: %s\n", what, kiln_last_error());
  std::exit(1);
}

void ok(kiln_status st, const char* what) {
  if (st != KILN_OK) die(what);
}

// Parameters of the given shapes (f32, on the CPU) holding a gradient: the
// loss sum(p * 1e-3) gives each the gradient 1e-3 everywhere.
std::vector<kiln_tensor*> parameters_with_gradients(kiln_runtime* rt, const kiln::bench::ParamShapes& shapes) {
  const kiln_op *mul = nullptr, *sum = nullptr;
  ok(kiln_op_find(rt, "mul", &mul), "op mul");
  ok(kiln_op_find(rt, "sum", &sum), "op sum");
  std::vector<kiln_tensor*> params;
  for (const std::vector<int64_t>& shape : shapes) {
    kiln_tensor *p = nullptr, *c = nullptr, *product = nullptr, *loss = nullptr;
    const int rank = int(shape.size());
    ok(kiln_tensor_full(rt, shape.data(), rank, 0.01, KILN_F32, KILN_DEVICE_CPU, 0, &p), "parameter");
    ok(kiln_tensor_set_requires_grad(p, 1), "requires_grad");
    ok(kiln_tensor_full(rt, shape.data(), rank, 1e-3, KILN_F32, KILN_DEVICE_CPU, 0, &c), "gradient seed");
    kiln_tensor* args[2] = {p, c};
    ok(kiln_op_call1(rt, mul, args, 2, nullptr, 0, &product), "mul");
    ok(kiln_op_call1(rt, sum, &product, 1, nullptr, 0, &loss), "sum");
    ok(kiln_backward(rt, loss, nullptr, 0), "backward");
    kiln_tensor_release(loss);
    kiln_tensor_release(product);
    kiln_tensor_release(c);
    params.push_back(p);
  }
  return params;
}

double step_seconds(kiln_runtime* rt, std::vector<kiln_tensor*>& params, const char* type, const kiln_attr* hyper,
                    size_t n_hyper) {
  kiln_optimizer* opt = nullptr;
  ok(kiln_optimizer_create(rt, type, params.data(), params.size(), hyper, n_hyper, &opt), type);
  const double s = kiln::bench::median_seconds([&] { ok(kiln_optimizer_step(opt), "step"); }, 1.0);
  kiln_optimizer_release(opt);
  return s;
}

}  // namespace

int main() {
  kiln_runtime_options options{};
  options.size = sizeof options;
  options.num_threads = 2;
  kiln_runtime* rt = nullptr;
  ok(kiln_runtime_create(&options, &rt), "runtime");
  const kiln_attr adamw[] = {kiln_attr_float("lr", 1e-3), kiln_attr_float("weight_decay", 1e-2)};
  const kiln_attr sgd[] = {kiln_attr_float("lr", 1e-2), kiln_attr_float("momentum", 0.9)};
  std::printf("kiln optimizer step, f32 on the CPU (median ms per step)\n");
  std::printf("%-34s %8s %10s %12s %12s\n", "parameters", "tensors", "values", "AdamW ms", "SGD mom. ms");
  for (const kiln::bench::ParamList& list : kiln::bench::param_lists()) {
    std::vector<kiln_tensor*> params = parameters_with_gradients(rt, list.shapes);
    const double adamw_s = step_seconds(rt, params, "AdamW", adamw, 2);
    const double sgd_s = step_seconds(rt, params, "SGD", sgd, 2);
    std::printf("%-34s %8zu %10lld %12.3f %12.3f\n", list.name, params.size(),
                (long long)kiln::bench::value_count(list.shapes), adamw_s * 1e3, sgd_s * 1e3);
    for (kiln_tensor* p : params) kiln_tensor_release(p);
  }
  kiln_runtime_release(rt);
  return 0;
}
