// kiln::Op: looked up once, called by handle with tensors and attributes;
// it keeps its runtime.
#include <optional>
#include <vector>

#include "support.hpp"

TEST_CASE("Op calls give one or several outputs", "[op]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  const kiln::Tensor x = kiln::Tensor::from_data(rt, std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  const kiln::Op reshape(rt, "reshape");
  const kiln::Tensor y = reshape({x}, {{"shape", {3, 2}}});
  CHECK(y.shape() == kiln::Shape{3, 2});
  const std::vector<kiln::Tensor> parts = kiln::Op(rt, "split").call({x}, {{"dim", 1}, {"sizes", {1, 2}}});
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].to_vector<float>() == std::vector<float>{1, 4});
  CHECK(parts[1].to_vector<float>() == std::vector<float>{2, 3, 5, 6});
}

TEST_CASE("Op leaves out an optional input given as an empty tensor", "[op]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  const kiln::Tensor x = kiln::Tensor::full(rt, {1, 2}, 1.0), w = kiln::Tensor::full(rt, {3, 2}, 2.0);
  const kiln::Op linear(rt, "linear");
  CHECK(linear({x, w, kiln::Tensor(nullptr)}).to_vector<float>() == std::vector<float>{4, 4, 4});
  CHECK(linear({x, w, kiln::Tensor::full(rt, {3}, 1.0)}).to_vector<float>() == std::vector<float>{5, 5, 5});
}

TEST_CASE("Op errors: unknown names, bad inputs, too many outputs", "[op]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  REQUIRE_KILN_ERROR(kiln::Op(rt, "matmull"), KILN_ERR_NOT_FOUND, "matmull", "matmul");
  const kiln::Op matmul(rt, "matmul");
  REQUIRE_KILN_ERROR(matmul({kiln::Tensor::zeros(rt, {2, 3}), kiln::Tensor::zeros(rt, {2, 3})}),
                     KILN_ERR_SHAPE_MISMATCH, "matmul");
  const kiln::Op split(rt, "split");
  REQUIRE_KILN_ERROR(split({kiln::Tensor::zeros(rt, {2})}, {{"sizes", {1, 1}}}), KILN_ERR_INVALID_ARGUMENT,
                     "2 outputs");
  const std::vector<int64_t> ones(kiln::kMaxOutputs + 1, 1);
  const kiln::Tensor wide = kiln::Tensor::zeros(rt, {static_cast<int64_t>(ones.size())});
  REQUIRE_KILN_ERROR(split.call({wide}, {{"sizes", ones}}), KILN_ERR_INVALID_ARGUMENT, "65 outputs", "room for 64");
}

TEST_CASE("Op keeps its runtime after the runtime's wrappers are gone", "[op][lifetime]") {
  std::optional<kiln::Op> relu;
  {
    const kiln::Runtime rt = kiln_test::make_runtime();
    relu.emplace(rt, "relu");
  }
  REQUIRE(relu->runtime());
  const kiln::Tensor x = kiln::Tensor::from_data(relu->runtime(), std::vector<float>{-1, 2}, {2});
  CHECK((*relu)({x}).to_vector<float>() == std::vector<float>{0, 2});
}
