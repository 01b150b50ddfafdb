// The autograd tape. Each recorded op call becomes a Node holding what its
// backward needs and one Edge per input, pointing at the node that produced
// that input (or at the leaf's gradient accumulator). Tensors point at nodes,
// never the reverse, so the graph is freed when its outputs are.
#pragma once

#include <memory>
#include <vector>

#include "kiln/ops/op_def.hpp"
#include "kiln/tensor.hpp"

namespace kiln {

class Node;

struct Edge {
  std::shared_ptr<Node> node;  // null: the input needs no gradient
  int input_nr = 0;            // which of node's outputs the gradient is for
};

class Node {
 public:
  virtual ~Node() = default;
  // Gradients for each input edge from gradients of each output.
  virtual std::vector<Tensor> apply(Runtime& rt, std::vector<Tensor>& grad_outputs) = 0;
  // Drops saved tensors; a later apply() reports that the graph was freed.
  virtual void release() {}
  virtual std::string name() const = 0;

  std::vector<Edge> next_edges;
  int num_outputs = 1;
};

// Backward of one op call.
class OpNode final : public Node {
 public:
  OpNode(const OpDef& op, Attrs attrs) : op_(op), attrs_(std::move(attrs)) {}
  std::vector<Tensor> apply(Runtime& rt, std::vector<Tensor>& grad_outputs) override;
  void release() override;
  std::string name() const override { return op_.name; }

  std::vector<Tensor> saved_inputs;
  std::vector<Tensor> saved_outputs;
  // Input metadata, kept even when the inputs themselves are not saved, so a
  // backward that needs only shapes, dtypes or devices holds no input memory.
  std::vector<TensorMeta> input_meta;
  // Output metadata, so undefined grad_outputs can be filled with zeros.
  std::vector<TensorMeta> output_meta;

 private:
  const OpDef& op_;
  Attrs attrs_;
  bool released_ = false;
};

// End of the graph at a leaf: adds the incoming gradient into leaf.grad.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf) : leaf_(std::move(leaf)) { num_outputs = 1; }
  std::vector<Tensor> apply(Runtime& rt, std::vector<Tensor>& grad_outputs) override;
  std::string name() const override { return "accumulate_grad"; }

 private:
  std::shared_ptr<TensorImpl> leaf_;
};

// The edge a node records for input `t` (which requires grad): to the node
// that made it, or to the gradient accumulator of a leaf, shared by every
// use of that leaf.
Edge gradient_edge(const Tensor& t);

}  // namespace kiln
