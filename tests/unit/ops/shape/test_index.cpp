// index_select, index_add, scatter and scatter_add against hand-worked
// results, their gradients against finite differences, and the errors for
// indices out of range, bad dims and mismatched shapes.
#include <catch2/catch.hpp>

#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// 0, 1, 2, ... in row-major order.
Tensor iota(Runtime& rt, const Shape& shape, DType dtype = DType::f64) {
  std::vector<double> v(size_t(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(i);
  return make_tensor(rt, shape, v, dtype);
}

Tensor indices(Runtime& rt, const std::vector<double>& v, DType t = DType::i64) {
  return make_tensor(rt, {int64_t(v.size())}, v, t);
}

}  // namespace

TEST_CASE("index_select picks slices along a dim in the index's order", "[shape][index]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64, DType::i64, DType::u8})
    for (DType it : {DType::i64, DType::i32}) {
      Tensor x = iota(rt, {3, 2}, t);  // [[0, 1], [2, 3], [4, 5]]
      require_close(rt, rt.call1("index_select", {x, indices(rt, {2, 0, 2}, it)}, {{"dim", 0}}), {4, 5, 0, 1, 4, 5});
      require_close(rt, rt.call1("index_select", {x, indices(rt, {1}, it)}, {{"dim", -1}}), {1, 3, 5});
    }
  Tensor y = iota(rt, {2, 3, 2});
  require_close(rt, rt.call1("index_select", {y, indices(rt, {2, 1})}, {{"dim", 1}}), {4, 5, 2, 3, 10, 11, 8, 9});
  CHECK(rt.call1("index_select", {y, indices(rt, {})}, {{"dim", 1}}).shape() == Shape{2, 0, 2});
  CHECK(rt.call1("index_select", {y, make_tensor(rt, {}, {1}, DType::i64)}, {{"dim", 0}}).shape() == Shape{1, 3, 2});
}

TEST_CASE("index_add adds alpha times the source's slices, repeated indices summing", "[shape][index]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64, DType::bf16}) {
    Tensor x = make_tensor(rt, {3, 2}, {1, 1, 1, 1, 1, 1}, t);
    Tensor source = iota(rt, {3, 2}, t);
    require_close(rt, rt.call1("index_add", {x, indices(rt, {2, 0, 2}), source}, {{"dim", 0}}), {3, 4, 1, 1, 5, 7});
    require_close(rt,
                  rt.call1("index_add", {x, indices(rt, {1}, DType::i32), iota(rt, {3, 1}, t)},
                           {{"dim", 1}, {"alpha", 2.0}}),
                  {1, 1, 1, 3, 1, 5});
  }
}

TEST_CASE("scatter writes and scatter_add adds src at the indexed positions", "[shape][index]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64}) {
    Tensor x = make_tensor(rt, {2, 3}, {0, 0, 0, 0, 0, 0}, t);
    Tensor src = iota(rt, {2, 3}, t);  // only the part the index covers is read
    Tensor index = make_tensor(rt, {1, 2}, {2, 0}, DType::i64);
    require_close(rt, rt.call1("scatter", {x, index, src}, {{"dim", 1}}), {1, 0, 0, 0, 0, 0});
    require_close(rt, rt.call1("scatter", {x, make_tensor(rt, {2, 2}, {1, 0, 0, 1}, DType::i32), src}, {{"dim", 0}}),
                  {3, 1, 0, 0, 4, 0});
    Tensor ones = make_tensor(rt, {2, 3}, {1, 1, 1, 1, 1, 1}, t);
    require_close(rt,
                  rt.call1("scatter_add", {ones, make_tensor(rt, {2, 2}, {0, 0, 2, 2}, DType::i64), src},
                           {{"dim", 1}}),
                  {2, 1, 1, 1, 1, 8});
    require_close(rt, rt.call1("scatter_add", {ones, make_tensor(rt, {2, 3}, {1, 1, 1, 1, 1, 1}, DType::i64), src},
                                {{"dim", 0}}),
                  {1, 1, 1, 4, 6, 8});
  }
  Tensor i = rt.call1("scatter", {iota(rt, {3}, DType::i64), indices(rt, {0}), make_tensor(rt, {1}, {9}, DType::i64)},
                      {{"dim", 0}});
  require_close(rt, i, {9, 1, 2});
}

TEST_CASE("indexing ops name the bad index, dim or shape", "[shape][index]") {
  Runtime rt;
  Tensor x = iota(rt, {3, 2});
  require_error([&] { rt.call1("index_select", {x, indices(rt, {0, 3})}, {{"dim", 0}}); }, Status::invalid_argument,
                {"index_select", "index 3 is out of range for dimension 0 of size 3 (expected 0 <= index < 3)"});
  require_error([&] { rt.call1("index_select", {x, indices(rt, {-1})}, {{"dim", 1}}); }, Status::invalid_argument,
                {"index -1 is out of range for dimension 1 of size 2"});
  require_error([&] { rt.call1("index_select", {x, indices(rt, {0})}, {{"dim", 2}}); }, Status::invalid_argument,
                {"index_select", "dimension 2 is out of range for a tensor of rank 2"});
  require_error([&] { rt.call1("index_select", {x, iota(rt, {1, 1}, DType::i64)}, {{"dim", 0}}); },
                Status::shape_mismatch, {"index must be 1-D (or a scalar), got shape [1, 1]"});
  require_error([&] { rt.call1("index_select", {x, make_tensor(rt, {1}, {0}, DType::f32)}, {{"dim", 0}}); },
                Status::dtype_mismatch, {"must hold indices (i64 or i32), got f32"});
  require_error([&] { rt.call1("index_select", {make_tensor(rt, {}, {1}), indices(rt, {0})}, {{"dim", 0}}); },
                Status::invalid_argument, {"needs a tensor of rank 1 or more, got a scalar"});
  require_error([&] { rt.call1("index_add", {x, indices(rt, {0, 5}), iota(rt, {2, 2})}, {{"dim", 0}}); },
                Status::invalid_argument, {"index_add", "index 5 is out of range for dimension 0 of size 3"});
  require_error([&] { rt.call1("index_add", {x, indices(rt, {0, 1}), iota(rt, {3, 2})}, {{"dim", 0}}); },
                Status::shape_mismatch,
                {"index_add", "source has shape [3, 2] but 2 indices along dimension 0 of input [3, 2] need [2, 2]"});
  require_error([&] { rt.call1("index_add", {x, indices(rt, {0}), iota(rt, {1, 2}, DType::f32)}, {{"dim", 0}}); },
                Status::dtype_mismatch, {"source is f32 but input is f64"});
  require_error([&] { rt.call1("scatter", {x, make_tensor(rt, {1, 1}, {3}, DType::i64), x}, {{"dim", 0}}); },
                Status::invalid_argument, {"scatter", "index 3 is out of range for dimension 0 of size 3"});
  const Tensor wide = make_tensor(rt, {1, 3}, {0, 0, 0}, DType::i64);
  require_error([&] { rt.call1("scatter_add", {x, wide, iota(rt, {3, 3})}, {{"dim", 0}}); },
                Status::shape_mismatch, {"scatter_add", "is larger than input [3, 2] in dimension 1"});
  const Tensor tall = make_tensor(rt, {2, 1}, {0, 0}, DType::i64);
  require_error([&] { rt.call1("scatter", {x, tall, iota(rt, {1, 2})}, {{"dim", 1}}); },
                Status::shape_mismatch, {"index [2, 1] is larger than src [1, 2] in dimension 0"});
  require_error([&] { rt.call1("scatter", {x, indices(rt, {0}), x}, {{"dim", 0}}); }, Status::shape_mismatch,
                {"must have the same rank"});
  require_error([&] { rt.call1("scatter", {x, make_tensor(rt, {1, 1}, {0}, DType::i64), x}, {{"dim", -3}}); },
                Status::invalid_argument, {"scatter", "dimension -3 is out of range"});
}

TEST_CASE("indexing op gradients match finite differences", "[shape][index][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {3, 4}, DType::f64, -1.0, 1.0, 101);
  const GradcheckOptions skip_index{.skip_inputs = {1}};
  gradcheck(rt, "index_select", {x, indices(rt, {2, 0, 2})}, {{"dim", 0}}, skip_index);
  gradcheck(rt, "index_select", {x, indices(rt, {3, 1}, DType::i32)}, {{"dim", -1}}, skip_index);
  gradcheck(rt, "index_add", {x, indices(rt, {1, 1, 0}), random_tensor(rt, {3, 3}, DType::f64, -1, 1, 102)},
            {{"dim", 1}, {"alpha", -1.5}}, skip_index);
  Tensor index = make_tensor(rt, {2, 3}, {2, 0, 1, 0, 2, 2}, DType::i64);
  Tensor src = random_tensor(rt, {3, 4}, DType::f64, -1, 1, 103);
  gradcheck(rt, "scatter", {x, index, src}, {{"dim", 0}}, skip_index);
  gradcheck(rt, "scatter_add", {x, index, src}, {{"dim", 0}}, skip_index);
  Tensor by_column = make_tensor(rt, {3, 2}, {3, 0, 1, 1, 0, 2}, DType::i64);
  gradcheck(rt, "scatter_add", {x, by_column, src}, {{"dim", 1}}, skip_index);
}
