// Ops with their own kernels, registered by plugins: a kiln_op_type turned
// into an OpDef whose infer, kernels and backward are adapters that call the
// plugin through C types (kiln_tensor handles, kiln_attr values).
#pragma once

#include <string>

#include "kiln/ops/op_def.hpp"
#include "plugin/registry.hpp"

namespace kiln::abi {

// The definition of `type` for the runtime `rt`; throws invalid_argument
// naming the op and what is malformed. The definition keeps a copy of the
// struct and `plugin` (so the code stays loaded while the op exists), but
// no reference on `rt`: it lives in rt's own op table.
OpDef make_plugin_op(const kiln_op_type& type, kiln_runtime* rt, const std::string& plugin_name, PluginRef plugin);

// The plugin that registered `op`, or nullptr for a built-in op.
const std::string* plugin_of_op(const OpDef& op);

}  // namespace kiln::abi
