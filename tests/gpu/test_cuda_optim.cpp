// The fused optimizer updates on cuda:0 against the CPU kernels: many
// tensors of odd sizes (several launches, chunk tails, a tensor longer than
// a chunk, one whose data is not 16-byte aligned), several steps, every
// floating dtype. Skipped with the reason without a GPU.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>

#include "device_test_support.hpp"
#include "ops/optim/fused_update_support.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

std::vector<Shape> odd_shapes() {
  std::vector<Shape> shapes;
  for (int64_t i = 0; i < 300; ++i) shapes.push_back({(i * 37) % 1009 + 1});
  shapes.push_back({3 * 65536 + 13});  // four chunks, the last one short
  shapes.push_back({0});
  shapes.push_back({17, 3});
  return shapes;
}

// Copies of `lists` on `device`; with `misalign`, parameter 0's lists start
// one element into their storage, so its packets are not aligned.
std::vector<std::vector<Tensor>> copies_on(Runtime& rt, const std::vector<std::vector<Tensor>>& lists, Device device,
                                           bool misalign) {
  std::vector<std::vector<Tensor>> out;
  for (const auto& list : lists) {
    std::vector<Tensor> copied;
    for (size_t i = 0; i < list.size(); ++i) {
      if (misalign && i == 0) {
        const int64_t n = list[i].numel();
        const Tensor padded = rt.call1("concat", {rt.full({1}, 0.0, list[i].dtype()), list[i]});
        const Tensor on = to_device(rt, padded, device);
        copied.push_back(rt.call1("slice", {on}, {{"dim", 0}, {"start", 1}, {"end", n + 1}}));
      } else {
        copied.push_back(to_device(rt, list[i], device));
      }
    }
    out.push_back(std::move(copied));
  }
  return out;
}

void check_against_cpu(Runtime& rt, const std::string& op, const UpdateAttrs& fixed, int n_lists,
                       const std::function<UpdateAttrs(int)>& per_step) {
  const Device gpu = Device::cuda(0);
  for (DType t : kFloatTypes) {
    INFO(op << " in " << dtype_name(t));
    std::vector<Shape> shapes = odd_shapes();
    // The misaligned parameter is one-dimensional (a slice of a padded copy).
    shapes[0] = {4099};
    auto cpu = make_update_lists(rt, shapes, n_lists, t);
    auto cuda = copies_on(rt, cpu, gpu, true);
    REQUIRE(reinterpret_cast<uintptr_t>(cuda[0][0].raw_data()) % 16 != 0);
    const double tol = t == DType::f64 ? 1e-12 : t == DType::f32 ? 1e-5 : 1e-2;
    for (int step = 1; step <= 3; ++step) {
      set_gradients(rt, cpu, step);
      for (size_t i = 0; i < shapes.size(); ++i) cuda[1][i] = to_device(rt, cpu[1][i], gpu);
      UpdateAttrs attrs = fixed;
      for (auto& a : per_step(step)) attrs.push_back(a);
      run_update(rt, op, cpu, attrs);
      run_update(rt, op, cuda, attrs);
    }
    for (int l = 0; l < n_lists; ++l) {
      if (l == 1) continue;  // gradients are inputs only
      for (size_t i = 0; i < shapes.size(); ++i) {
        INFO("list " << l << ", parameter " << i);
        require_close(rt, cuda[size_t(l)][i], values(rt, cpu[size_t(l)][i]), tol * 0.1, tol);
      }
    }
  }
}

}  // namespace

TEST_CASE("sgd_update on cuda:0 matches the CPU over many tensors", "[gpu][optim]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const auto first_step = [](int step) { return UpdateAttrs{{"first_step", step == 1}}; };
  check_against_cpu(rt, "sgd_update", {{"lr", 0.1}, {"weight_decay", 0.01}}, 2, first_step);
  const UpdateAttrs nesterov = {
      {"lr", 0.05}, {"momentum", 0.9}, {"nesterov", true}, {"weight_decay", 0.01}, {"maximize", true}};
  check_against_cpu(rt, "sgd_update", nesterov, 3, first_step);
}

TEST_CASE("adam_update on cuda:0 matches the CPU over many tensors", "[gpu][optim]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const auto step_attr = [](int step) { return UpdateAttrs{{"step", int64_t(step)}}; };
  check_against_cpu(rt, "adam_update", {{"lr", 0.01}, {"weight_decay", 0.1}}, 4, step_attr);
  check_against_cpu(rt, "adam_update", {{"lr", 0.02}, {"weight_decay", 0.05}, {"decoupled", true}, {"amsgrad", true}},
                    5, step_attr);
}

TEST_CASE("fused updates refuse tensors on two devices", "[gpu][optim][errors]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::vector<Tensor> inputs = {rt.full({2}, 1.0, DType::f32, Device::cuda(0)), rt.full({2}, 1.0)};
  const OpDef& sgd = rt.op("sgd_update");
  NoGradGuard no_grad(rt);
  require_error([&] { rt.call(sgd, inputs, sgd.make_attrs({{"lr", 0.1}})); }, Status::device_mismatch,
                {"op 'sgd_update'", "different devices"});
}
