#include <omp.h>

#include <catch2/catch.hpp>

#include "kiln/kernels/dnnl_context.hpp"
#include "kiln/runtime.hpp"

using namespace kiln;

TEST_CASE("oneDNN runs small work on the calling thread alone and larger work on the runtime's threads", "[dnnl]") {
  RuntimeOptions options;
  options.num_threads = 2;
  Runtime rt(options);
  DnnlContext& ctx = rt.dnnl();
  {
    const auto lock = ctx.lock_for_execution(DnnlContext::kSerialWork - 1);
    CHECK(omp_get_max_threads() == 1);
  }
  {
    const auto lock = ctx.lock_for_execution(DnnlContext::kSerialWork);
    CHECK(omp_get_max_threads() == 2);
  }
  // A product counts its multiply-adds at kMultiplyAddsPerElement to an element.
  const auto matmul = [&](int64_t m, int64_t k, int64_t n) {
    return rt.call1("matmul", {rt.full({m, k}, 1.0, DType::f32), rt.full({k, n}, 1.0, DType::f32)});
  };
  const Tensor small = matmul(32, 64, 256);  // an LSTM gate product: serial
  CHECK(omp_get_max_threads() == 1);
  CHECK(small.shape() == Shape{32, 256});
  const Tensor large = matmul(256, 256, 256);
  CHECK(omp_get_max_threads() == 2);
  CHECK(large.shape() == Shape{256, 256});
}
