// PyTorch's results for kiln's ops, stored by tests/fixtures/torch/generate.py
// as one safetensors file per op (the file's docstring describes the layout).
// Reading them needs no PyTorch: the files are part of the source tree.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kiln/runtime.hpp"

namespace kiln::test {

// One stored call of an op and what PyTorch made of it.
struct FixtureCase {
  int index = 0;
  std::string label;
  std::vector<std::string> input_names;  // "x", or "tensors.0", "tensors.1" for a variadic input
  std::vector<Tensor> inputs;            // undefined where an optional input is left out
  std::vector<std::pair<std::string, std::string>> attrs;  // name, value as listings write it
  std::vector<Tensor> outputs;
  std::vector<Tensor> weights;  // one per output; undefined where the output takes no gradient
  std::vector<Tensor> grads;    // one per input; undefined where none is stored

  bool checks_gradients() const;
};

struct FixtureFile {
  std::string path;
  std::string op;
  std::string torch_version;
  std::vector<FixtureCase> cases;
};

// The folder of the stored files (set by the build).
std::string fixture_folder();
// Every `<op>.safetensors` there, sorted by name.
std::vector<std::string> fixture_paths();
// The op a path stores, from its file name.
std::string fixture_op_name(const std::string& path);
// Reads one file into CPU tensors; throws kiln::Error naming the file and
// the entry when the metadata or a tensor is missing or malformed.
FixtureFile read_fixture(Runtime& rt, const std::string& path);

}  // namespace kiln::test
