#include <catch2/catch.hpp>

#include "kiln/runtime.hpp"
#include "ops/reduction/reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("embedding looks up rows for i64 and i32 indices", "[reduction][indexing]") {
  Runtime rt;
  for (DType dtype : {DType::f32, DType::f64})
    for (DType index_type : {DType::i64, DType::i32}) {
      Tensor w = random_tensor(rt, {4, 3}, dtype, -1.0, 1.0, 51);
      Tensor idx = make_tensor(rt, {2, 2}, {3, 0, 3, 1}, index_type);
      Tensor y = rt.call1("embedding", {idx, w});
      CHECK(y.shape() == Shape{2, 2, 3});
      const std::vector<double> wv = values(rt, w);
      std::vector<double> expected;
      for (int row : {3, 0, 3, 1})
        for (int k = 0; k < 3; ++k) expected.push_back(wv[size_t(row * 3 + k)]);
      require_close(rt, y, expected);
    }
}

TEST_CASE("gather follows torch.gather along each dimension", "[reduction][indexing]") {
  Runtime rt;
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor x = make_tensor(rt, {2, 3}, {1, 2, 3, 4, 5, 6}, dtype);
    require_close(rt, rt.call1("gather", {x, make_tensor(rt, {2, 2}, {2, 0, 1, 1}, DType::i64)}, {{"dim", 1}}),
                  {3, 1, 5, 5});
    require_close(rt, rt.call1("gather", {x, make_tensor(rt, {1, 3}, {1, 0, 1}, DType::i64)}, {{"dim", 0}}),
                  {4, 2, 6});
    Tensor t = rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 1}});  // [[1,4],[2,5],[3,6]], strided
    require_close(rt, rt.call1("gather", {t, make_tensor(rt, {3, 1}, {1, 0, 1}, DType::i32)}, {{"dim", -1}}),
                  {4, 2, 6});
  }
}

TEST_CASE("concat and split are each other's inverse", "[reduction][indexing]") {
  Runtime rt;
  for (DType dtype : {DType::f32, DType::f64, DType::i64}) {
    Tensor a = make_tensor(rt, {2, 1}, {1, 2}, dtype);
    Tensor b = rt.call1("transpose", {make_tensor(rt, {2, 2}, {3, 5, 4, 6}, dtype)}, {{"dim0", 0}, {"dim1", 1}});
    Tensor c = make_tensor(rt, {2, 0}, {}, dtype);
    const std::vector<Tensor> parts{a, b, c};
    Tensor y = rt.call1(rt.op("concat"), parts, rt.op("concat").make_attrs({{"dim", -1}}));
    CHECK(y.shape() == Shape{2, 3});
    require_close(rt, y, {1, 3, 4, 2, 5, 6});

    std::vector<Tensor> chunks = rt.call("split", {y}, {{"dim", 1}, {"sizes", std::vector<int64_t>{2}}});
    REQUIRE(chunks.size() == 2);
    require_close(rt, chunks[0], {1, 3, 2, 5});
    require_close(rt, chunks[1], {4, 6});
    chunks = rt.call("split", {y}, {{"dim", 1}, {"sizes", std::vector<int64_t>{1, 0, 2}}});
    REQUIRE(chunks.size() == 3);
    CHECK(chunks[1].shape() == Shape{2, 0});
    require_close(rt, chunks[2], {3, 4, 5, 6});
  }
}

TEST_CASE("indexing gradients match finite differences", "[reduction][indexing][grad]") {
  Runtime rt;
  Tensor w = random_tensor(rt, {5, 3}, DType::f64, -1.0, 1.0, 61);
  gradcheck(rt, "embedding", {make_tensor(rt, {2, 3}, {4, 0, 4, 2, 4, 1}, DType::i64), w});
  gradcheck(rt, "embedding", {make_tensor(rt, {3}, {1, 1, 0}, DType::i32), w});

  Tensor x = random_tensor(rt, {3, 4}, DType::f64, -1.0, 1.0, 62);
  gradcheck(rt, "gather", {x, make_tensor(rt, {3, 2}, {0, 3, 3, 3, 1, 2}, DType::i64)}, {{"dim", 1}});
  gradcheck(rt, "gather", {x, make_tensor(rt, {4, 4}, {0, 1, 2, 0, 2, 2, 2, 2, 1, 0, 0, 1, 0, 0, 0, 0}, DType::i64)},
            {{"dim", 0}});

  gradcheck(rt, "concat", {x, random_tensor(rt, {3, 1}, DType::f64), random_tensor(rt, {3, 2}, DType::f64)},
            {{"dim", 1}});
  gradcheck(rt, "concat", {x, random_tensor(rt, {2, 4}, DType::f64)}, {{"dim", 0}});
  Tensor z = random_tensor(rt, {2, 5, 3}, DType::f64, -1.0, 1.0, 63);
  gradcheck(rt, "split", {z}, {{"dim", 1}, {"sizes", std::vector<int64_t>{2}}});
  gradcheck(rt, "split", {z}, {{"dim", -1}, {"sizes", std::vector<int64_t>{2, 1}}});
}

TEST_CASE("indexing ops reject bad indices and shapes", "[reduction][indexing][errors]") {
  Runtime rt;
  Tensor w = rt.full({4, 3}, 1.0);
  require_error([&] { rt.call1("embedding", {make_tensor(rt, {2}, {1, 4}, DType::i64), w}); },
                Status::invalid_argument, {"op 'embedding'", "index 4", "size 4"});
  require_error([&] { rt.call1("embedding", {rt.full({2}, 1.0), w}); }, Status::dtype_mismatch,
                {"op 'embedding'", "f32"});
  Tensor x = rt.full({2, 3}, 1.0);
  require_error([&] { rt.call1("gather", {x, make_tensor(rt, {2, 1}, {0, 3}, DType::i64)}, {{"dim", 1}}); },
                Status::invalid_argument, {"op 'gather'", "index 3", "size 3"});
  require_error([&] { rt.call1("gather", {x, make_tensor(rt, {3, 1}, {0, 0, 0}, DType::i64)}, {{"dim", 1}}); },
                Status::shape_mismatch, {"op 'gather'", "[3, 1]", "[2, 3]"});
  require_error([&] { rt.call1("concat", {x, rt.full({3, 3}, 1.0)}, {{"dim", 1}}); }, Status::shape_mismatch,
                {"op 'concat'", "[3, 3]", "[2, 3]"});
  require_error([&] { rt.call1("concat", {x, rt.full({2, 3}, 1.0, DType::f64)}); }, Status::dtype_mismatch,
                {"op 'concat'", "f64"});
  require_error([&] { rt.call("split", {x}, {{"dim", 1}, {"sizes", std::vector<int64_t>{1, 1}}}); },
                Status::shape_mismatch, {"op 'split'", "add up to 2", "size 3"});
  require_error([&] { rt.call1("concat", {rt.full({}, 1.0), rt.full({}, 2.0)}); }, Status::invalid_argument,
                {"op 'concat'", "scalar"});
}
