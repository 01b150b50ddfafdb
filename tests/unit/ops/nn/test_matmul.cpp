#include <catch2/catch.hpp>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"
#include "test_matmul_reference.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

Tensor transposed(Runtime& rt, const Tensor& t) { return rt.call1("transpose", {t}, {{"dim0", -2}, {"dim1", -1}}); }

// matmul(a, b) in f32 and f64 against the loop reference.
void check_matmul_forward(Runtime& rt, const Tensor& a, const Tensor& b, const Shape& expected_shape) {
  const std::vector<double> expected = reference_matmul(values(rt, a), a.shape(), values(rt, b), b.shape(), expected_shape);
  for (DType t : {DType::f32, DType::f64}) {
    INFO("dtype " << dtype_name(t) << ", a " << to_string(a.shape()) << ", b " << to_string(b.shape()));
    const Tensor at = a.dtype() == t ? a : make_tensor(rt, a.shape(), values(rt, a), t);
    const Tensor bt = b.dtype() == t ? b : make_tensor(rt, b.shape(), values(rt, b), t);
    const Tensor out = rt.call1("matmul", {at, bt});
    CHECK(out.shape() == expected_shape);
    CHECK(out.dtype() == t);
    require_close(rt, out, expected, 1e-5, 1e-5);
  }
}

}  // namespace

TEST_CASE("matmul matches the loop reference for 2-D and broadcast batches", "[nn][matmul]") {
  Runtime rt;
  check_matmul_forward(rt, random_tensor(rt, {3, 4}), random_tensor(rt, {4, 5}, DType::f64, -1, 1, 2), {3, 5});
  check_matmul_forward(rt, random_tensor(rt, {7, 13}), random_tensor(rt, {13, 9}, DType::f64, -1, 1, 2), {7, 9});
  check_matmul_forward(rt, random_tensor(rt, {2, 1, 3, 4}), random_tensor(rt, {3, 4, 5}, DType::f64, -1, 1, 2),
                       {2, 3, 3, 5});
  check_matmul_forward(rt, random_tensor(rt, {2, 3, 4}), random_tensor(rt, {4, 2}, DType::f64, -1, 1, 2), {2, 3, 2});
}

TEST_CASE("matmul reads transposed and expanded views", "[nn][matmul]") {
  Runtime rt;
  const Tensor a_t = transposed(rt, random_tensor(rt, {4, 3}));  // [3, 4], column-major
  const Tensor b_t = transposed(rt, random_tensor(rt, {2, 5, 4}, DType::f64, -1, 1, 3));  // [2, 4, 5]
  CHECK_FALSE(a_t.is_contiguous());
  check_matmul_forward(rt, a_t, b_t, {2, 3, 5});
  // Both operands as f32 views, which oneDNN takes through their strides.
  const Tensor a32 = transposed(rt, random_tensor(rt, {4, 3}, DType::f32));
  const Tensor b32 = transposed(rt, random_tensor(rt, {5, 4}, DType::f32, -1, 1, 4));
  require_close(rt, rt.call1("matmul", {a32, b32}),
                reference_matmul(values(rt, a32), a32.shape(), values(rt, b32), b32.shape(), {3, 5}), 1e-5, 1e-5);
  // A zero-stride (expanded) operand.
  const Tensor e = rt.call1("expand", {random_tensor(rt, {1, 4, 2}, DType::f32)}, {{"shape", std::vector<int64_t>{3, 4, 2}}});
  const Tensor a3 = random_tensor(rt, {3, 2, 4}, DType::f32, -1, 1, 5);
  require_close(rt, rt.call1("matmul", {a3, e}),
                reference_matmul(values(rt, a3), a3.shape(), values(rt, e), e.shape(), {3, 2, 2}), 1e-5, 1e-5);
}

TEST_CASE("matmul f32 of a long transposed operand (a weight gradient's product) matches the reference",
          "[nn][matmul]") {
  // a^T b with a [k, m] and b [k, n], k and m * n past kiln's own kernel's
  // thresholds on AVX2: row counts that leave blocks of 4, 2 and 1 rows, k
  // that ends in a part slice, and an offset view. Sums of hundreds of f32
  // products of values in [-1, 1] (up to about 8 in size) carry rounding
  // errors of some 1e-5.
  Runtime rt;
  struct Case {
    int64_t k, m, n;
  };
  for (const Case c : {Case{300, 13, 5056}, Case{600, 70, 944}, Case{256, 7, 9376}}) {
    INFO("k " << c.k << " m " << c.m << " n " << c.n);
    const Tensor a = transposed(rt, random_tensor(rt, {c.k, c.m}, DType::f32));
    const Tensor b = random_tensor(rt, {c.k, c.n}, DType::f32, -1, 1, 2);
    require_close(rt, rt.call1("matmul", {a, b}),
                  reference_matmul(values(rt, a), a.shape(), values(rt, b), b.shape(), {c.m, c.n}), 1e-4, 1e-5);
  }
  const Tensor whole = random_tensor(rt, {800, 17}, DType::f32);
  const Tensor second = rt.call1("slice", {whole}, {{"dim", 0}, {"start", 400}});
  const Tensor a = transposed(rt, second), b = random_tensor(rt, {400, 3856}, DType::f32, -1, 1, 3);
  CHECK(a.offset() == 400 * 17);
  require_close(rt, rt.call1("matmul", {a, b}),
                reference_matmul(values(rt, a), a.shape(), values(rt, b), b.shape(), {17, 3856}), 1e-4, 1e-5);
}

TEST_CASE("matmul with an empty inner dimension gives zeros", "[nn][matmul]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64}) {
    const Tensor out = rt.call1("matmul", {rt.full({2, 0}, 1.0, t), rt.full({0, 3}, 1.0, t)});
    CHECK(out.shape() == Shape{2, 3});
    require_close(rt, out, std::vector<double>(6, 0.0));
  }
}

TEST_CASE("matmul gradients match finite differences", "[nn][matmul][grad]") {
  Runtime rt;
  gradcheck(rt, "matmul", {random_tensor(rt, {3, 4}), random_tensor(rt, {4, 5}, DType::f64, -1, 1, 2)});
  gradcheck(rt, "matmul", {random_tensor(rt, {2, 1, 3, 4}), random_tensor(rt, {3, 4, 2}, DType::f64, -1, 1, 2)});
  gradcheck(rt, "matmul", {random_tensor(rt, {2, 3, 4}), random_tensor(rt, {4, 5}, DType::f64, -1, 1, 2)});
  gradcheck_fn(rt, [&](const std::vector<Tensor>& in) { return rt.call1("matmul", {transposed(rt, in[0]), in[1]}); },
               {random_tensor(rt, {4, 3}), random_tensor(rt, {4, 2}, DType::f64, -1, 1, 2)});
}

TEST_CASE("matmul f32 gradients through oneDNN match the reference", "[nn][matmul][grad]") {
  Runtime rt;
  const Shape as{2, 1, 3, 4}, bs{3, 4, 5}, out_shape{2, 3, 3, 5};
  Tensor a = random_tensor(rt, as, DType::f32), b = random_tensor(rt, bs, DType::f32, -1, 1, 2);
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  const Tensor g = random_tensor(rt, out_shape, DType::f32, -1, 1, 3);
  rt.backward(rt.call1("matmul", {a, b}), g);
  // grad_a = sum over broadcast batches of g @ b^T; grad_b = sum of a^T @ g.
  const std::vector<double> av = values(rt, a), bv = values(rt, b), gv = values(rt, g);
  std::vector<double> ga(av.size(), 0.0), gb(bv.size(), 0.0);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t m = 0; m < 3; ++m)
        for (int64_t n = 0; n < 5; ++n)
          for (int64_t k = 0; k < 4; ++k) {
            const double gval = gv[size_t(((i * 3 + j) * 3 + m) * 5 + n)];
            ga[size_t((i * 3 + m) * 4 + k)] += gval * bv[size_t((j * 4 + k) * 5 + n)];
            gb[size_t((j * 4 + k) * 5 + n)] += gval * av[size_t((i * 3 + m) * 4 + k)];
          }
  require_close(rt, a.grad(), ga, 1e-5, 1e-5);
  require_close(rt, b.grad(), gb, 1e-5, 1e-5);
}

TEST_CASE("matmul rejects shapes and dtypes that do not fit", "[nn][matmul][errors]") {
  Runtime rt;
  try {
    rt.call1("matmul", {rt.full({2, 3}, 1.0), rt.full({4, 5}, 1.0)});
    FAIL("mismatched inner dimensions accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::shape_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("op 'matmul'") && Catch::Contains("[2, 3]") && Catch::Contains("[4, 5]"));
  }
  try {
    rt.call1("matmul", {rt.full({3}, 1.0), rt.full({3, 2}, 1.0)});
    FAIL("a rank-1 operand accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::shape_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("rank 2 or more") && Catch::Contains("[3]"));
  }
  try {
    rt.call1("matmul", {rt.full({2, 2, 3}, 1.0), rt.full({3, 3, 2}, 1.0)});
    FAIL("batch dims that do not broadcast accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::shape_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("matmul"));
  }
  try {
    rt.call1("matmul", {rt.full({2, 3}, 1.0, DType::f32), rt.full({3, 2}, 1.0, DType::f64)});
    FAIL("mixed dtypes accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::dtype_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("op 'matmul'") && Catch::Contains("f64") && Catch::Contains("f32"));
  }
  try {
    rt.call1("matmul", {rt.full({2, 3}, 1.0, DType::i32), rt.full({3, 2}, 1.0, DType::i32)});
    FAIL("integer operands accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::dtype_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("floating point") && Catch::Contains("i32"));
  }
}
