// plan_multi_tensor, the host side of the multi-tensor GPU kernels: which
// (tensor, chunk) pairs each launch carries.
#include <catch2/catch.hpp>

#include <map>
#include <utility>

#include "kiln/error.hpp"
#include "kiln/ops/multi_tensor_plan.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;

namespace {

using Blocks = std::vector<std::pair<int, int32_t>>;

Blocks blocks_of(const MultiTensorLaunch& l) {
  Blocks out;
  for (const MultiTensorBlock& b : l.blocks) out.emplace_back(b.slot, b.chunk);
  return out;
}

// Every chunk of every tensor exactly once, within the limits.
void check_covers(std::span<const int64_t> numels, const MultiTensorLimits& limits,
                  const std::vector<MultiTensorLaunch>& plan) {
  std::map<std::pair<size_t, int32_t>, int> seen;
  for (const MultiTensorLaunch& l : plan) {
    REQUIRE(!l.blocks.empty());
    REQUIRE(int(l.tensors.size()) <= limits.max_tensors);
    REQUIRE(int(l.blocks.size()) <= limits.max_blocks);
    for (const MultiTensorBlock& b : l.blocks) {
      REQUIRE(b.slot >= 0);
      REQUIRE(size_t(b.slot) < l.tensors.size());
      ++seen[{l.tensors[size_t(b.slot)], b.chunk}];
    }
  }
  size_t expected = 0;
  for (size_t i = 0; i < numels.size(); ++i) {
    const int64_t chunks = (numels[i] + limits.chunk - 1) / limits.chunk;
    for (int32_t c = 0; c < chunks; ++c) {
      INFO("tensor " << i << ", chunk " << c);
      CHECK(seen[{i, c}] == 1);
    }
    expected += size_t(chunks);
  }
  CHECK(seen.size() == expected);
}

}  // namespace

TEST_CASE("multi-tensor plan: chunks end at the chunk size", "[optim][plan]") {
  const MultiTensorLimits limits{multi_tensor_max_tensors(4)};
  const std::vector<int64_t> numels = {kMultiTensorChunk, kMultiTensorChunk + 1, 1};
  const auto plan = plan_multi_tensor(numels, limits);
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].tensors == std::vector<size_t>{0, 1, 2});
  CHECK(blocks_of(plan[0]) == Blocks{{0, 0}, {1, 0}, {1, 1}, {2, 0}});
  check_covers(numels, limits, plan);
}

TEST_CASE("multi-tensor plan: many tiny tensors fill launches up to the tensor limit", "[optim][plan]") {
  const MultiTensorLimits limits{multi_tensor_max_tensors(5)};
  const std::vector<int64_t> numels(1000, 3);
  const auto plan = plan_multi_tensor(numels, limits);
  const size_t per_launch = size_t(limits.max_tensors);
  CHECK(plan.size() == (1000 + per_launch - 1) / per_launch);
  for (size_t l = 0; l + 1 < plan.size(); ++l) CHECK(plan[l].tensors.size() == per_launch);
  check_covers(numels, limits, plan);
}

TEST_CASE("multi-tensor plan: one huge tensor spans launches", "[optim][plan]") {
  const MultiTensorLimits limits{multi_tensor_max_tensors(2)};
  const std::vector<int64_t> numels = {2 * kMultiTensorMaxBlocks * kMultiTensorChunk + 5};
  const auto plan = plan_multi_tensor(numels, limits);
  REQUIRE(plan.size() == 3);
  CHECK(plan[0].blocks.size() == size_t(kMultiTensorMaxBlocks));
  CHECK(plan[1].blocks.size() == size_t(kMultiTensorMaxBlocks));
  CHECK(blocks_of(plan[2]) == Blocks{{0, 2 * kMultiTensorMaxBlocks}});
  for (const auto& l : plan) CHECK(l.tensors == std::vector<size_t>{0});
  check_covers(numels, limits, plan);
}

TEST_CASE("multi-tensor plan: empty tensors get no blocks", "[optim][plan]") {
  const MultiTensorLimits limits{multi_tensor_max_tensors(3)};
  const std::vector<int64_t> numels = {0, 5, 0, 0, 7};
  const auto plan = plan_multi_tensor(numels, limits);
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].tensors == std::vector<size_t>{1, 4});
  CHECK(blocks_of(plan[0]) == Blocks{{0, 0}, {1, 0}});
  CHECK(plan_multi_tensor(std::vector<int64_t>{0, 0}, limits).empty());
  CHECK(plan_multi_tensor({}, limits).empty());
}

TEST_CASE("multi-tensor plan: a full argument space starts a new launch", "[optim][plan]") {
  // Blocks run out mid-tensor: the tensor continues in the next launch.
  const MultiTensorLimits blocks{2, 3, 4};
  const std::vector<int64_t> numels = {10, 3, 9};
  const auto plan = plan_multi_tensor(numels, blocks);
  REQUIRE(plan.size() == 3);
  CHECK(plan[0].tensors == std::vector<size_t>{0});
  CHECK(blocks_of(plan[0]) == Blocks{{0, 0}, {0, 1}, {0, 2}});
  CHECK(plan[1].tensors == std::vector<size_t>{1, 2});
  CHECK(blocks_of(plan[1]) == Blocks{{0, 0}, {1, 0}, {1, 1}});
  CHECK(plan[2].tensors == std::vector<size_t>{2});
  CHECK(blocks_of(plan[2]) == Blocks{{0, 2}});
  check_covers(numels, blocks, plan);

  // Tensor slots run out.
  const MultiTensorLimits tensors{2, 100, 4};
  const std::vector<int64_t> small = {1, 1, 1};
  const auto by_tensors = plan_multi_tensor(small, tensors);
  REQUIRE(by_tensors.size() == 2);
  CHECK(by_tensors[0].tensors == std::vector<size_t>{0, 1});
  CHECK(by_tensors[1].tensors == std::vector<size_t>{2});
  check_covers(small, tensors, by_tensors);
}

TEST_CASE("multi-tensor plan: the metadata fits the kernel-argument space", "[optim][plan]") {
  for (int depth = 1; depth <= 5; ++depth) {
    INFO("depth " << depth);
    const size_t tensors = size_t(multi_tensor_max_tensors(depth));
    CHECK(tensors >= 30);
    CHECK(tensors <= 255);
    const size_t bytes = tensors * (sizeof(void*) * size_t(depth) + sizeof(int64_t)) +
                         size_t(kMultiTensorMaxBlocks) * (sizeof(int32_t) + sizeof(uint8_t));
    CHECK(bytes + kMultiTensorHyperBytes <= kMultiTensorArgBytes);
  }
  CHECK(kMultiTensorChunk % 16 == 0);  // chunks start on a packet boundary of every dtype
}

TEST_CASE("multi-tensor plan: limits must be positive", "[optim][plan][errors]") {
  const std::vector<int64_t> numels = {4};
  kiln::test::require_error([&] { plan_multi_tensor(numels, MultiTensorLimits{0, 3, 4}); }, Status::invalid_argument,
                            {"multi-tensor plan", "limits must be positive", "0 tensors"});
  kiln::test::require_error([&] { plan_multi_tensor(numels, MultiTensorLimits{1, 3, 0}); }, Status::invalid_argument,
                            {"chunks of 0"});
  // Block metadata holds chunk indices as int32.
  const std::vector<int64_t> huge = {int64_t(1) << 32};
  kiln::test::require_error([&] { plan_multi_tensor(huge, MultiTensorLimits{1, 3, 1}); }, Status::invalid_argument,
                            {"tensor 0 has 4294967296 elements", "more than 2147483647 chunks of 1"});
}
