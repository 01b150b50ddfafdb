// Named tensors to and from safetensors files: the piece every checkpoint
// (a set of tensors, a model's weights, a whole training state) is made of.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/checkpoint/safetensors.hpp"
#include "kiln/runtime.hpp"
#include "kiln/tensor.hpp"

namespace kiln::abi {

struct StateTensor {
  std::string name;
  Tensor tensor;
};
using StateTensors = std::vector<StateTensor>;

// Writes `tensors` (on any device, in any layout) and `metadata` to `path`
// atomically (see checkpoint::write_safetensors).
void save_named_tensors(Runtime& rt, const std::string& path, const StateTensors& tensors,
                        const checkpoint::Metadata& metadata);

// A new CPU tensor holding the values of `entry` of `file`.
Tensor read_entry(Runtime& rt, const checkpoint::SafetensorsReader& file, const checkpoint::TensorEntry& entry);

// A tensor of the file waiting to be copied into its destination.
struct Assignment {
  Tensor target;
  Tensor values;
};

// Pairs each of `targets` with the file's tensor named `prefix` + its name
// and reads those into host memory, changing nothing yet. Shapes must be
// equal. strict: the file's tensors under `prefix` and `targets` must have
// the same names; otherwise names only one side has are skipped. Every
// mismatch is listed in one error, which names `path` and `what` (the
// model the file is loaded into).
std::vector<Assignment> plan_assignments(Runtime& rt, const checkpoint::SafetensorsReader& file,
                                         const StateTensors& targets, std::string_view prefix, bool strict,
                                         std::string_view what);

// Copies every planned tensor into its target (converted to its dtype and
// moved to its device).
void apply_assignments(Runtime& rt, const std::vector<Assignment>& assignments);

}  // namespace kiln::abi
