// expand's size -1 keeps the input's size, as in PyTorch (the values are
// checked against PyTorch by the expand fixture).
#include <catch2/catch.hpp>

#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

TEST_CASE("expand keeps a dim whose size is -1", "[shape][views]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {1, 2}, {3, 4});
  Tensor y = rt.call1("expand", {x}, {{"shape", std::vector<int64_t>{2, 3, -1}}});
  CHECK(y.shape() == Shape{2, 3, 2});
  require_close(rt, y, {3, 4, 3, 4, 3, 4, 3, 4, 3, 4, 3, 4});
}

TEST_CASE("expand refuses -1 in a new leading dim", "[shape][views]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {1, 2}, {3, 4});
  require_error([&] { rt.call1("expand", {x}, {{"shape", std::vector<int64_t>{-1, 3, 2}}}); },
                Status::invalid_argument, {"op 'expand'", "size -1 in dim 0", "new leading dim", "[1, 2]"});
}
