// The checks `kiln plugin-check` runs on a module (a plugin's layer, or a
// plugin's op wrapped by kiln_module_from_op) given f64 CPU inputs that it
// accepts: gradients against central finite differences, the same
// computation on a GPU against the CPU, and a weights save/load round trip.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check_report.hpp"
#include "kiln/kiln.h"

namespace kiln::cli {

using TensorPtr = std::unique_ptr<kiln_tensor, decltype(&kiln_tensor_release)>;
using ModulePtr = std::unique_ptr<kiln_module, decltype(&kiln_module_release)>;

TensorPtr tensor_ptr(kiln_tensor* t);
ModulePtr module_ptr(kiln_module* m);

// A contiguous f64 CPU tensor of `shape` filled with values drawn from
// [0.5, 1.5) (positive and away from the kinks of relu, abs, sqrt and log),
// the same for the same `seed`; nullptr when the runtime refuses.
TensorPtr random_input(kiln_runtime* rt, const std::vector<int64_t>& shape, uint64_t seed);

// Output 0 of the module without recording gradients, or nullptr with
// kiln_last_error() saying why.
TensorPtr forward_no_grad(kiln_runtime* rt, kiln_module* module, const std::vector<kiln_tensor*>& inputs);

// Where the GPU comparison runs: a device, or why it does not run.
struct DeviceTarget {
  bool enabled = false;
  int index = 0;
  std::string skipped_because;
};

// Backward of sum(w * output 0) for fixed random weights w (random, so that
// an output that sums to a constant, as Softmax's, still has a gradient)
// against central finite differences in f64, for every input and parameter
// (up to 64 evenly spaced elements of each). The module must be f64, in
// eval mode, on the CPU.
Outcome check_gradients(kiln_runtime* rt, kiln_module* module, const std::vector<kiln_tensor*>& inputs);

// Output 0 and the gradients above computed on the target GPU against the
// CPU. Moves the module to that device, so it runs last.
Outcome check_on_device(kiln_runtime* rt, kiln_module* module, const std::vector<kiln_tensor*>& inputs,
                        const DeviceTarget& device);

// Saves the module's weights to a temporary safetensors file, loads them
// strictly into `fresh` (a new module of the same type and config, f64, in
// eval mode) and checks that both give bit-identical outputs.
Outcome check_weights_round_trip(kiln_runtime* rt, kiln_module* module, kiln_module* fresh,
                                 const std::vector<kiln_tensor*>& inputs, const std::string& file_stem);

}  // namespace kiln::cli
