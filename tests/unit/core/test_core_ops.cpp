#include <catch2/catch.hpp>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("full fills every dtype", "[core]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64, DType::u8}) {
    Tensor x = rt.full({2, 3}, 3.0, t);
    CHECK(x.dtype() == t);
    require_close(rt, x, std::vector<double>(6, 3.0));
  }
}

TEST_CASE("views share storage and copy makes them dense", "[core][views]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor t = rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 1}});
  CHECK(t.storage() == x.storage());
  CHECK_FALSE(t.is_contiguous());
  require_close(rt, t, {0, 3, 1, 4, 2, 5});
  Tensor s = rt.call1("slice", {x}, {{"dim", 1}, {"start", 1}, {"end", 3}});
  CHECK(s.storage() == x.storage());
  require_close(rt, s, {1, 2, 4, 5});
  Tensor r = rt.call1("reshape", {t}, {{"shape", std::vector<int64_t>{-1}}});
  require_close(rt, r, {0, 3, 1, 4, 2, 5});
  Tensor p = rt.call1("permute", {make_tensor(rt, {1, 2, 3}, {0, 1, 2, 3, 4, 5})}, {{"dims", std::vector<int64_t>{2, 0, 1}}});
  CHECK(p.shape() == Shape{3, 1, 2});
  require_close(rt, p, {0, 3, 1, 4, 2, 5});
  Tensor e = rt.call1("expand", {make_tensor(rt, {2, 1}, {7, 8})}, {{"shape", std::vector<int64_t>{2, 3}}});
  require_close(rt, e, {7, 7, 7, 8, 8, 8});
}

TEST_CASE("view and reduction gradients match finite differences", "[core][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {2, 3, 4});
  gradcheck(rt, "reshape", {x}, {{"shape", std::vector<int64_t>{4, -1}}});
  gradcheck(rt, "permute", {x}, {{"dims", std::vector<int64_t>{1, 2, 0}}});
  gradcheck(rt, "transpose", {x}, {{"dim0", 0}, {"dim1", 2}});
  gradcheck(rt, "slice", {x}, {{"dim", 2}, {"start", -3}, {"end", 4}, {"step", 2}});
  gradcheck(rt, "expand", {random_tensor(rt, {3, 1})}, {{"shape", std::vector<int64_t>{2, 3, 4}}});
  gradcheck(rt, "sum_to", {x}, {{"shape", std::vector<int64_t>{3, 1}}});
  gradcheck(rt, "copy", {x});
}

TEST_CASE("bad shapes and names give errors that say what is wrong", "[core][errors]") {
  Runtime rt;
  Tensor x = rt.full({2, 3}, 1.0);
  try {
    rt.call1("reshape", {x}, {{"shape", std::vector<int64_t>{4, 2}}});
    FAIL("reshape accepted a wrong element count");
  } catch (const Error& e) {
    CHECK(e.status() == Status::shape_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("op 'reshape'") && Catch::Contains("[2, 3]") && Catch::Contains("[4, 2]"));
  }
  try {
    rt.op("reshap");
    FAIL("unknown op was found");
  } catch (const Error& e) {
    CHECK(e.status() == Status::not_found);
    CHECK_THAT(e.what(), Catch::Contains("unknown op 'reshap'") && Catch::Contains("reshape"));
  }
  try {
    rt.call1("slice", {x}, {{"dimension", 1}});
    FAIL("unknown attribute accepted");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("no attribute 'dimension'") && Catch::Contains("dim, start, end, step"));
  }
}
