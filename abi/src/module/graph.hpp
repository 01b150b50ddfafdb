// Graph: named inputs and named nodes, for skip connections and several
// inputs. Each node is a module whose inputs are graph inputs or outputs of
// earlier nodes ("name" for output 0, "name:k" for output k); nodes run in
// the order added. The outputs are the ones set, else the last node's.
#pragma once

#include <string>
#include <vector>

#include "module/module.hpp"

namespace kiln::abi {

class Graph final : public Module {
 public:
  // Input names must be valid child names and distinct.
  Graph(kiln_runtime* rt, std::vector<std::string> input_names);

  const std::string& type() const override;
  std::vector<TensorRef> forward(std::span<kiln_tensor* const> inputs) override;
  std::span<const ModuleChild> children() const override { return nodes_; }

  // Checks the name is free, every input names something defined before and
  // `node` does not contain this graph.
  void add(const kiln_module& self, std::string name, kiln_module* node, std::span<const char* const> inputs);
  void set_outputs(std::span<const char* const> names);

 private:
  // Where a value comes from: a graph input or output `output` of a node.
  struct Source {
    bool graph_input;
    size_t index;
    size_t output;
    std::string text;  // as written by the caller, for messages
  };
  Source resolve(const char* text) const;
  std::string known_names() const;

  std::vector<std::string> input_names_;
  std::vector<ModuleChild> nodes_;
  std::vector<std::vector<Source>> node_inputs_;  // parallel to nodes_
  std::vector<Source> outputs_;                   // empty: the last node's outputs
};

}  // namespace kiln::abi
