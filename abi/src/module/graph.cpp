#include "module/graph.hpp"

#include <algorithm>
#include <charconv>

#include "module/module_error.hpp"
#include "module/module_handle.hpp"
#include "module/module_tree.hpp"

namespace kiln::abi {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text.empty() ? "none" : text;
}

}  // namespace

Graph::Graph(kiln_runtime* rt, std::vector<std::string> input_names)
    : Module(rt), input_names_(std::move(input_names)) {
  for (size_t i = 0; i < input_names_.size(); ++i) {
    check_child_name(input_names_[i], "graph input");
    KILN_CHECK(std::find(input_names_.begin(), input_names_.begin() + i, input_names_[i]) == input_names_.begin() + i,
               Status::invalid_argument, "graph input '", input_names_[i], "' is named twice");
  }
}

const std::string& Graph::type() const {
  static const std::string name = "Graph";
  return name;
}

std::string Graph::known_names() const {
  std::vector<std::string> nodes;
  for (const ModuleChild& n : nodes_) nodes.push_back(n.name);
  return "inputs: " + join(input_names_) + "; nodes: " + join(nodes);
}

Graph::Source Graph::resolve(const char* text) const {
  KILN_CHECK(text, Status::invalid_argument, "a value name is NULL; expected \"name\" or \"name:k\"");
  const std::string_view full(text);
  const size_t colon = full.find(':');
  const std::string name(full.substr(0, colon));
  size_t output = 0;
  if (colon != std::string_view::npos) {
    const std::string_view digits = full.substr(colon + 1);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), output);
    KILN_CHECK(!digits.empty() && error == std::errc() && end == digits.data() + digits.size(),
               Status::invalid_argument, "'", full, "' is not \"name\" or \"name:k\" with k an output index");
  }
  const auto input = std::find(input_names_.begin(), input_names_.end(), name);
  if (input != input_names_.end()) {
    KILN_CHECK(output == 0, Status::invalid_argument, "'", full, "': graph input '", name,
               "' is one tensor; only output 0 exists");
    return {true, size_t(input - input_names_.begin()), 0, std::string(full)};
  }
  const auto node = std::find_if(nodes_.begin(), nodes_.end(), [&](const ModuleChild& n) { return n.name == name; });
  KILN_CHECK(node != nodes_.end(), Status::not_found, "the graph has no input or node named '", name,
             "' before this point (", known_names(), ")");
  return {false, size_t(node - nodes_.begin()), output, std::string(full)};
}

void Graph::add(const kiln_module& self, std::string name, kiln_module* node, std::span<const char* const> inputs) {
  check_child_name(name, "node");
  const bool taken = std::find(input_names_.begin(), input_names_.end(), name) != input_names_.end() ||
                     std::any_of(nodes_.begin(), nodes_.end(), [&](const ModuleChild& n) { return n.name == name; });
  KILN_CHECK(!taken, Status::invalid_argument, "the name '", name, "' is already taken (", known_names(), ")");
  KILN_CHECK(node->runtime == runtime(), Status::invalid_argument, "node '", name, "' belongs to another runtime");
  KILN_CHECK(!tree_contains(*node, &self), Status::invalid_argument, "node '", name,
             "' contains this graph; a module cannot be inside itself");
  std::vector<Source> sources;
  for (const char* text : inputs) sources.push_back(resolve(text));
  nodes_.push_back({std::move(name), ModuleRef::retain(node)});
  node_inputs_.push_back(std::move(sources));
}

void Graph::set_outputs(std::span<const char* const> names) {
  KILN_CHECK(!names.empty(), Status::invalid_argument, "a graph needs at least one output (", known_names(), ")");
  std::vector<Source> sources;
  for (const char* text : names) sources.push_back(resolve(text));
  outputs_ = std::move(sources);
}

std::vector<TensorRef> Graph::forward(std::span<kiln_tensor* const> inputs) {
  KILN_CHECK(inputs.size() == input_names_.size(), Status::invalid_argument, "the graph takes ", input_names_.size(),
             " inputs (", join(input_names_), "), got ", inputs.size());
  KILN_CHECK(!nodes_.empty() || !outputs_.empty(), Status::invalid_state,
             "the graph has no nodes and no outputs set; add a node with kiln_graph_add");
  std::vector<std::vector<TensorRef>> node_values;
  node_values.reserve(nodes_.size());
  const auto fetch = [&](const Source& s, const std::string& reader) {
    if (s.graph_input) return TensorRef::retain(inputs[s.index]);
    const std::vector<TensorRef>& given = node_values[s.index];
    KILN_CHECK(s.output < given.size(), Status::invalid_argument, reader, " reads '", s.text, "', but node '",
               nodes_[s.index].name, "' gave ", given.size(), " output(s)");
    return given[s.output];
  };
  for (size_t i = 0; i < nodes_.size(); ++i) {
    std::vector<TensorRef> args;
    for (const Source& s : node_inputs_[i]) args.push_back(fetch(s, "node '" + nodes_[i].name + "'"));
    node_values.push_back(forward_child(nodes_[i], i, type(), borrow(args)));
  }
  if (outputs_.empty()) return std::move(node_values.back());
  std::vector<TensorRef> result;
  for (const Source& s : outputs_) result.push_back(fetch(s, "the graph output"));
  return result;
}

}  // namespace kiln::abi
