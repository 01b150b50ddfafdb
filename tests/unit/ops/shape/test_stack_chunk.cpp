// stack and chunk: shapes and values as torch.stack and torch.chunk give
// them (negative dims, strided inputs, empty dims, a short last chunk),
// gradients against finite differences, and the errors.
#include <catch2/catch.hpp>

#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

Tensor stack(Runtime& rt, const std::vector<Tensor>& parts, int64_t dim) {
  const OpDef& op = rt.op("stack");
  return rt.call1(op, parts, op.make_attrs({{"dim", dim}}));
}

}  // namespace

TEST_CASE("stack joins tensors along a new dim", "[shape][stack]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64, DType::i64, DType::boolean}) {
    Tensor a = make_tensor(rt, {2}, {1, 0}, t), b = make_tensor(rt, {2}, {0, 1}, t);
    Tensor rows = stack(rt, {a, b}, 0);
    CHECK(rows.shape() == Shape{2, 2});
    require_close(rt, rows, {1, 0, 0, 1});
    Tensor columns = stack(rt, {a, b, a}, -1);
    CHECK(columns.shape() == Shape{2, 3});
    require_close(rt, columns, {1, 0, 1, 0, 1, 0});
  }
  Tensor x = make_tensor(rt, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor t = rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 1}});  // strided [3, 2]
  Tensor y = stack(rt, {t, t}, 1);
  CHECK(y.shape() == Shape{3, 2, 2});
  require_close(rt, y, {1, 4, 1, 4, 2, 5, 2, 5, 3, 6, 3, 6});
  CHECK(stack(rt, {make_tensor(rt, {}, {1}), make_tensor(rt, {}, {2})}, 0).shape() == Shape{2});
  CHECK(stack(rt, {make_tensor(rt, {0, 2}, {}), make_tensor(rt, {0, 2}, {})}, 2).shape() == Shape{0, 2, 2});

  require_error([&] { stack(rt, {x, t}, 0); }, Status::shape_mismatch,
                {"stack", "tensor 1 has shape [3, 2] but tensor 0 has [2, 3]"});
  require_error([&] { stack(rt, {x, make_tensor(rt, {2, 3}, {1, 2, 3, 4, 5, 6}, DType::f32)}, 0); },
                Status::dtype_mismatch, {"stack", "tensor 1 is f32 but tensor 0 is f64"});
  require_error([&] { stack(rt, {x, x}, 3); }, Status::invalid_argument,
                {"stack", "dimension 3 is out of range for a tensor of rank 3"});
  require_error([&] { stack(rt, {}, 0); }, Status::invalid_argument, {"stack", "needs at least one tensor"});
}

TEST_CASE("chunk cuts a dim into pieces of ceil(size / chunks)", "[shape][chunk]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, DType::i32);
  std::vector<Tensor> pieces = rt.call("chunk", {x}, {{"chunks", 2}, {"dim", -1}});
  REQUIRE(pieces.size() == 2);
  require_close(rt, pieces[0], {0, 1, 2, 5, 6, 7});
  require_close(rt, pieces[1], {3, 4, 8, 9});
  // Six rows in four chunks are pieces of 2: three of them.
  pieces = rt.call("chunk", {make_tensor(rt, {6}, {0, 1, 2, 3, 4, 5})}, {{"chunks", 4}});
  REQUIRE(pieces.size() == 3);
  require_close(rt, pieces[2], {4, 5});
  pieces = rt.call("chunk", {x}, {{"chunks", 5}});
  REQUIRE(pieces.size() == 2);
  CHECK(pieces[1].shape() == Shape{1, 5});
  pieces = rt.call("chunk", {make_tensor(rt, {0, 3}, {})}, {{"chunks", 3}});
  REQUIRE(pieces.size() == 1);
  CHECK(pieces[0].shape() == Shape{0, 3});

  require_error([&] { rt.call("chunk", {x}, {{"chunks", 0}}); }, Status::invalid_argument,
                {"chunk", "chunks must be positive, got 0"});
  require_error([&] { rt.call("chunk", {x}, {{"chunks", 2}, {"dim", 2}}); }, Status::invalid_argument,
                {"chunk", "dimension 2 is out of range"});
  require_error([&] { rt.call("chunk", {make_tensor(rt, {}, {1})}, {{"chunks", 2}}); }, Status::invalid_argument,
                {"chunk", "cannot chunk a scalar"});
}

TEST_CASE("stack and chunk gradients match finite differences", "[shape][stack][chunk][grad]") {
  Runtime rt;
  Tensor a = random_tensor(rt, {2, 3}, DType::f64, -1, 1, 111), b = random_tensor(rt, {2, 3}, DType::f64, -1, 1, 112);
  gradcheck(rt, "stack", {a, b}, {{"dim", 1}});
  gradcheck(rt, "stack", {a, b, random_tensor(rt, {2, 3}, DType::f64, -1, 1, 114)}, {{"dim", -1}});
  Tensor x = random_tensor(rt, {5, 3}, DType::f64, -1, 1, 113);
  gradcheck(rt, "chunk", {x}, {{"chunks", 3}});
  gradcheck(rt, "chunk", {x}, {{"chunks", 2}, {"dim", -1}});
}
