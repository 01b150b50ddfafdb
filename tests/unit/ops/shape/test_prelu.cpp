// prelu with one slope and one per channel, against the formula worked by
// hand; both gradients against finite differences; the weight-shape error.
#include <catch2/catch.hpp>

#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("prelu scales the negative part by the channel's slope", "[shape][prelu]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64, DType::bf16}) {
    // [batch 1, channels 2, 2 elements]
    Tensor x = make_tensor(rt, {1, 2, 2}, {-2, 1, -4, 0.5}, t);
    require_close(rt, rt.call1("prelu", {x, make_tensor(rt, {1}, {0.25}, t)}), {-0.5, 1, -1, 0.5});
    require_close(rt, rt.call1("prelu", {x, make_tensor(rt, {2}, {0.5, 0.25}, t)}), {-1, 1, -1, 0.5});
  }
  // Rank 1: no channel dim, one slope.
  require_close(rt, rt.call1("prelu", {make_tensor(rt, {3}, {-1, 0, 2}), make_tensor(rt, {1}, {0.1})}), {-0.1, 0, 2});
  CHECK(rt.call1("prelu", {make_tensor(rt, {0, 3}, {}), make_tensor(rt, {3}, {1, 2, 3})}).shape() == Shape{0, 3});
  require_error([&] { rt.call1("prelu", {random_tensor(rt, {2, 3}), random_tensor(rt, {2})}); },
                Status::shape_mismatch,
                {"prelu", "weight of shape [2] for input [2, 3]; expected 1 slope or one per channel (3"});
}

TEST_CASE("prelu gradients match finite differences", "[shape][prelu][grad]") {
  Runtime rt;
  // Values kept away from 0, where the slope changes.
  std::vector<double> v = values(rt, random_tensor(rt, {2, 3, 4}, DType::f64, -1, 1, 121));
  for (double& e : v) e += e < 0 ? -0.1 : 0.1;
  Tensor x = make_tensor(rt, {2, 3, 4}, v);
  gradcheck(rt, "prelu", {x, make_tensor(rt, {3}, {0.25, -0.5, 1.5})});
  gradcheck(rt, "prelu", {x, make_tensor(rt, {1}, {0.3})});
}
