// bmm and baddbmm against the loop reference, with transposed operands,
// gradients against finite differences, and PyTorch's shape errors.
#include <catch2/catch.hpp>
#include <cmath>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"
#include "test_matmul_reference.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// beta * input (broadcast to out) + alpha * product, over doubles.
std::vector<double> baddbmm_reference(const std::vector<double>& input, const Shape& is,
                                      const std::vector<double>& product, const Shape& out, double beta,
                                      double alpha) {
  std::vector<double> y(product.size());
  for (int64_t e = 0; e < out.numel(); ++e) {
    int64_t index = 0, rest = e, scale = 1;
    for (int d = 2; d >= 0; --d) {
      const int id = is.rank() - (3 - d);
      if (id >= 0 && is[id] != 1) index += (rest % out[d]) * scale;
      if (id >= 0) scale *= is[id];
      rest /= out[d];
    }
    y[size_t(e)] = (beta == 0 ? 0.0 : beta * input[size_t(index)]) + alpha * product[size_t(e)];
  }
  return y;
}

}  // namespace

TEST_CASE("bmm matches the loop reference", "[nn][matmul][bmm]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64})
    for (const auto& [as, bs] : {std::pair<Shape, Shape>{{2, 3, 4}, {2, 4, 5}}, {{1, 1, 7}, {1, 7, 1}},
                                 {{4, 5, 2}, {4, 2, 3}}, {{3, 2, 0}, {3, 0, 4}}}) {
      INFO(dtype_name(t) << " " << to_string(as) << " @ " << to_string(bs));
      const Tensor a = random_tensor(rt, as, t, -1.0, 1.0, 101), b = random_tensor(rt, bs, t, -1.0, 1.0, 102);
      const Tensor y = rt.call1("bmm", {a, b});
      const Shape out{as[0], as[1], bs[2]};
      CHECK(y.shape() == out);
      CHECK(y.dtype() == t);
      require_close(rt, y, reference_matmul(values(rt, a), as, values(rt, b), bs, out), 1e-5, 1e-5);
    }
  // Transposed views go through as they are.
  const Tensor a = rt.call1("transpose", {random_tensor(rt, {3, 4, 2})}, {{"dim0", 1}, {"dim1", 2}});  // [3, 2, 4]
  const Tensor b = random_tensor(rt, {3, 4, 5}, DType::f64, -1.0, 1.0, 103);
  REQUIRE_FALSE(a.is_contiguous());
  require_close(rt, rt.call1("bmm", {a, b}), reference_matmul(values(rt, a), a.shape(), values(rt, b), b.shape(),
                                                              {3, 2, 5}));
}

TEST_CASE("baddbmm adds the scaled product to the scaled, broadcast input", "[nn][matmul][baddbmm]") {
  Runtime rt;
  const Shape as{3, 2, 4}, bs{3, 4, 5}, out{3, 2, 5};
  for (DType t : {DType::f32, DType::f64})
    for (const Shape& is : {Shape{3, 2, 5}, Shape{5}, Shape{2, 1}, Shape{1, 1, 5}})
      for (const auto& [beta, alpha] : {std::pair{1.0, 1.0}, {0.5, -2.0}, {0.0, 3.0}}) {
        INFO(dtype_name(t) << " input " << to_string(is) << " beta " << beta << " alpha " << alpha);
        const Tensor a = random_tensor(rt, as, t, -1.0, 1.0, 111), b = random_tensor(rt, bs, t, -1.0, 1.0, 112);
        const Tensor input = random_tensor(rt, is, t, -1.0, 1.0, 113);
        const Tensor y = rt.call1("baddbmm", {input, a, b}, {{"beta", beta}, {"alpha", alpha}});
        CHECK(y.shape() == out);
        const std::vector<double> product = reference_matmul(values(rt, a), as, values(rt, b), bs, out);
        require_close(rt, y, baddbmm_reference(values(rt, input), is, product, out, beta, alpha), 1e-5, 1e-5);
      }
  INFO("a beta of 0 ignores NaNs in the input, as torch.baddbmm");
  const Tensor nan = rt.full({2, 2, 2}, std::nan(""), DType::f64);
  const Tensor eye = make_tensor(rt, {2, 2, 2}, {1, 0, 0, 1, 1, 0, 0, 1});
  require_close(rt, rt.call1("baddbmm", {nan, eye, eye}, {{"beta", 0.0}}), {1, 0, 0, 1, 1, 0, 0, 1});
}

TEST_CASE("bmm and baddbmm gradients match finite differences", "[nn][matmul][grad]") {
  Runtime rt;
  const Tensor a = random_tensor(rt, {2, 3, 4}, DType::f64, -1.0, 1.0, 121);
  const Tensor b = random_tensor(rt, {2, 4, 2}, DType::f64, -1.0, 1.0, 122);
  gradcheck(rt, "bmm", {a, b});
  for (const Shape& is : {Shape{2, 3, 2}, Shape{2}, Shape{3, 1}}) {
    INFO("input " << to_string(is));
    const Tensor input = random_tensor(rt, is, DType::f64, -1.0, 1.0, 123);
    gradcheck(rt, "baddbmm", {input, a, b});
    gradcheck(rt, "baddbmm", {input, a, b}, {{"beta", 0.25}, {"alpha", -1.5}});
  }
}

TEST_CASE("bmm and baddbmm reject operands that are not matching 3-d batches", "[nn][matmul][errors]") {
  Runtime rt;
  const Tensor a = rt.full({2, 3, 4}, 1.0), b = rt.full({2, 4, 5}, 1.0);
  require_error([&] { rt.call1("bmm", {rt.full({3, 4}, 1.0), b}); }, Status::shape_mismatch,
                {"op 'bmm'", "batch1 must be a 3D tensor", "[3, 4]"});
  require_error([&] { rt.call1("bmm", {a, rt.full({1, 2, 4, 5}, 1.0)}); }, Status::shape_mismatch,
                {"op 'bmm'", "batch2 must be a 3D tensor", "[1, 2, 4, 5]"});
  require_error([&] { rt.call1("bmm", {a, rt.full({1, 4, 5}, 1.0)}); }, Status::shape_mismatch,
                {"op 'bmm'", "expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [1, 4]"});
  require_error([&] { rt.call1("bmm", {a, rt.full({2, 3, 5}, 1.0)}); }, Status::shape_mismatch,
                {"op 'bmm'", "to be: [2, 4] but got: [2, 3]"});
  require_error([&] { rt.call1("bmm", {a, rt.full({2, 4, 5}, 1.0, DType::f64)}); }, Status::dtype_mismatch,
                {"op 'bmm'", "f64", "f32"});
  require_error([&] { rt.call1("baddbmm", {rt.full({2, 3, 4}, 1.0), a, b}); }, Status::shape_mismatch,
                {"op 'baddbmm'", "input of shape [2, 3, 4] does not broadcast", "[2, 3, 5]"});
  require_error([&] { rt.call1("baddbmm", {rt.full({5}, 1.0), a, rt.full({2, 5}, 1.0)}); }, Status::shape_mismatch,
                {"op 'baddbmm'", "batch2 must be a 3D tensor"});
}
