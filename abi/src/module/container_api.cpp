// The C API of the containers: Sequential, Graph and Checkpoint.
#include <memory>
#include <string>
#include <vector>

#include "guard.hpp"
#include "kiln/error.hpp"
#include "module/checkpoint.hpp"
#include "module/graph.hpp"
#include "module/module_handle.hpp"
#include "module/sequential.hpp"

using kiln::abi::guarded;

namespace {

// The container inside `m`, or an error saying what `m` is instead.
template <class Container>
Container& container_of(kiln_module* m, const char* want) {
  auto* container = dynamic_cast<Container*>(m->module.get());
  KILN_CHECK(container, kiln::Status::invalid_argument, "the module is of type ", m->module->type(), ", not a ", want);
  return *container;
}

void check_names(const char* const* names, size_t n, const char* what) {
  KILN_CHECK(names || n == 0, kiln::Status::invalid_argument, "'", what, "' is NULL with ", n, " entries");
}

}  // namespace

extern "C" {

kiln_status kiln_sequential_create(kiln_runtime* rt, kiln_module** out) {
  KILN_REQUIRE(rt, out);
  return guarded(__func__,
                 [&] { *out = kiln::abi::new_module_handle(rt, std::make_unique<kiln::abi::Sequential>(rt)); });
}

kiln_status kiln_sequential_append(kiln_module* sequential, const char* name, kiln_module* child) {
  KILN_REQUIRE(sequential, child);
  return guarded(__func__, [&] {
    container_of<kiln::abi::Sequential>(sequential, "Sequential").append(*sequential, name ? name : "", child);
  });
}

kiln_status kiln_graph_create(kiln_runtime* rt, const char* const* input_names, size_t n_inputs, kiln_module** out) {
  KILN_REQUIRE(rt, out);
  return guarded(__func__, [&] {
    check_names(input_names, n_inputs, "input_names");
    std::vector<std::string> names;
    for (size_t i = 0; i < n_inputs; ++i) {
      KILN_CHECK(input_names[i], kiln::Status::invalid_argument, "input_names[", i, "] is NULL");
      names.emplace_back(input_names[i]);
    }
    *out = kiln::abi::new_module_handle(rt, std::make_unique<kiln::abi::Graph>(rt, std::move(names)));
  });
}

kiln_status kiln_graph_add(kiln_module* graph, const char* name, kiln_module* node, const char* const* inputs,
                           size_t n_inputs) {
  KILN_REQUIRE(graph, name, node);
  return guarded(__func__, [&] {
    check_names(inputs, n_inputs, "inputs");
    container_of<kiln::abi::Graph>(graph, "Graph").add(*graph, name, node, {inputs, n_inputs});
  });
}

kiln_status kiln_graph_set_outputs(kiln_module* graph, const char* const* names, size_t n_names) {
  KILN_REQUIRE(graph);
  return guarded(__func__, [&] {
    check_names(names, n_names, "names");
    container_of<kiln::abi::Graph>(graph, "Graph").set_outputs({names, n_names});
  });
}

kiln_status kiln_module_checkpoint(kiln_runtime* rt, kiln_module* inner, kiln_module** out) {
  KILN_REQUIRE(rt, inner, out);
  return guarded(__func__,
                 [&] { *out = kiln::abi::new_module_handle(rt, std::make_unique<kiln::abi::Checkpoint>(rt, inner)); });
}

}  // extern "C"
