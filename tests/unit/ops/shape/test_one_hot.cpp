// one_hot against hand-worked results (inferred and given class counts,
// any rank, empty inputs) and its errors.
#include <catch2/catch.hpp>

#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("one_hot puts a 1 at each class index", "[shape][one_hot]") {
  Runtime rt;
  Tensor labels = make_tensor(rt, {3}, {2, 0, 1}, DType::i64);
  Tensor inferred = rt.call1("one_hot", {labels});
  CHECK(inferred.dtype() == DType::i64);
  CHECK(inferred.shape() == Shape{3, 3});
  require_close(rt, inferred, {0, 0, 1, 1, 0, 0, 0, 1, 0});
  Tensor given = rt.call1("one_hot", {labels}, {{"num_classes", 4}});
  CHECK(given.shape() == Shape{3, 4});
  require_close(rt, given, {0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0});
  Tensor batch = rt.call1("one_hot", {make_tensor(rt, {2, 2}, {1, 1, 0, 1}, DType::i64)});
  CHECK(batch.shape() == Shape{2, 2, 2});
  require_close(rt, batch, {0, 1, 0, 1, 1, 0, 0, 1});
  require_close(rt, rt.call1("one_hot", {make_tensor(rt, {}, {1}, DType::i64)}, {{"num_classes", 3}}), {0, 1, 0});
  CHECK(rt.call1("one_hot", {make_tensor(rt, {0}, {}, DType::i64)}, {{"num_classes", 5}}).shape() == Shape{0, 5});
}

TEST_CASE("one_hot refuses indices it cannot encode", "[shape][one_hot]") {
  Runtime rt;
  Tensor labels = make_tensor(rt, {3}, {2, 0, 1}, DType::i64);
  require_error([&] { rt.call1("one_hot", {labels}, {{"num_classes", 2}}); }, Status::invalid_argument,
                {"one_hot", "class index 2 is out of range for 2 classes"});
  require_error([&] { rt.call1("one_hot", {make_tensor(rt, {2}, {1, -1}, DType::i64)}); }, Status::invalid_argument,
                {"class index -1 is out of range"});
  require_error([&] { rt.call1("one_hot", {make_tensor(rt, {0}, {}, DType::i64)}); }, Status::invalid_argument,
                {"num_classes -1 takes the largest index + 1, and there are no indices"});
  require_error([&] { rt.call1("one_hot", {make_tensor(rt, {2}, {0, 1}, DType::i32)}); }, Status::dtype_mismatch,
                {"one_hot", "input must hold i64 class indices, got i32"});
  require_error([&] { rt.call1("one_hot", {labels}, {{"num_classes", -2}}); }, Status::invalid_argument,
                {"num_classes must be -1 (the largest index + 1) or at least 0, got -2"});
}
