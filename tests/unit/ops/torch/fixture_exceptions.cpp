#include "ops/torch/fixture_exceptions.hpp"

namespace kiln::test {
namespace {

constexpr FixtureException kExceptions[] = {
    {"rand", "random: kiln's Philox stream is not PyTorch's; test_creation_ops checks the distribution"},
    {"randn", "random: kiln's Philox stream is not PyTorch's; test_creation_ops checks the distribution"},
    {"dropout", "random mask: test_dropout checks the mask's rate, the scaling and the gradient"},
    {"dropout_backward", "applies dropout's random mask: test_dropout checks it"},
    {"sgd_update", "optimizer step in place: test_fused_updates follows torch.optim.SGD step by step"},
    {"adam_update", "optimizer step in place: test_fused_updates follows torch.optim.Adam and AdamW step by step"},
    {"to", "moves a tensor between devices without changing it: tests/gpu/test_to_op checks the round trip"},
};

}  // namespace

std::span<const FixtureException> fixture_exceptions() { return kExceptions; }

}  // namespace kiln::test
