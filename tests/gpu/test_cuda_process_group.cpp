// The nccl backend of process groups in a job of one rank on cuda:0 (a job
// of several GPUs is bench/gpu-check's): meeting, every collective on GPU
// tensors, a CPU tensor refused, and a group made again. Skipped with the
// reason without a GPU; refused with the reason in a build without NCCL.
#include <catch2/catch.hpp>

#include "device_test_support.hpp"
#include "kiln/dist/process_group.hpp"
#include "kiln/error.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

dist::ProcessGroupOptions one_rank_on_nccl() {
  dist::ProcessGroupOptions o;
  o.backend = "nccl";
  o.timeout = std::chrono::seconds(60);
  return o;
}

std::vector<double> values_of(Runtime& rt, const Tensor& t) { return values(rt, to_device(rt, t, Device::cpu())); }

}  // namespace

TEST_CASE("nccl: a group of one rank runs every collective on cuda:0", "[gpu][dist]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  if (!dist::nccl_version()) {
    REQUIRE_THROWS_WITH(dist::ProcessGroup::create(rt, one_rank_on_nccl()),
                        Catch::Contains("built without NCCL"));
    return;
  }
  std::unique_ptr<dist::ProcessGroup> pg = dist::ProcessGroup::create(rt, one_rank_on_nccl());
  const Device gpu = Device::cuda(0);
  for (DType dtype : {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64, DType::u8}) {
    CAPTURE(dtype_name(dtype));
    const Tensor t = to_device(rt, make_tensor(rt, {4}, {1, 2, 3, 4}, dtype), gpu);
    pg->all_reduce(t, dist::ReduceOp::sum)->wait();
    CHECK(values_of(rt, t) == std::vector<double>{1, 2, 3, 4});
    pg->broadcast(t, 0)->wait();
    const Tensor gathered = to_device(rt, rt.full({4}, 0.0, dtype), gpu);
    pg->all_gather(t, gathered)->wait();
    CHECK(values_of(rt, gathered) == std::vector<double>{1, 2, 3, 4});
    const Tensor part = to_device(rt, rt.full({4}, 0.0, dtype), gpu);
    pg->reduce_scatter(t, part, dist::ReduceOp::max)->wait();
    CHECK(values_of(rt, part) == std::vector<double>{1, 2, 3, 4});
  }
  const Tensor mean = to_device(rt, make_tensor(rt, {2}, {2, 4}, DType::f32), gpu);
  pg->all_reduce(mean, dist::ReduceOp::mean)->wait();
  CHECK(values_of(rt, mean) == std::vector<double>{2, 4});
  pg->barrier()->wait();
  REQUIRE_THROWS_WITH(pg->all_reduce(rt.full({2}, 1.0), dist::ReduceOp::sum),
                      Catch::Contains("the nccl backend cannot move 'tensor', a tensor on cpu"));
  pg.reset();
  // Made again, it meets anew.
  pg = dist::ProcessGroup::create(rt, one_rank_on_nccl());
  pg->barrier()->wait();
}
