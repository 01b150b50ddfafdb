// kiln.nn: layers, containers and ops as modules.
//
//   kiln.nn.Linear{in_features = 784, out_features = 10}   -- any registered layer type, by name:
//                                                          --   a plugin's layers appear by themselves
//   kiln.nn.Linear(784, 10, {bias = false})                -- positional shortcuts, then options:
//   kiln.nn.Conv2d(1, 32, 5, {padding = 2})                --   in, out, kernel
//   kiln.nn.MaxPool2d(2)   kiln.nn.Dropout(0.5)   kiln.nn.ReLU()
//   kiln.nn.Sequential{m1, m2, ...}                        -- then seq:add(m) or seq:add("name", m)
//   kiln.nn.Graph{inputs = {"x"},
//                 nodes = {{"conv", conv, {"x"}}, {"sum", kiln.nn.op("add"), {"x", "conv"}}},
//                 outputs = {"sum"}}                       -- outputs optional: the last node's
//   kiln.nn.op("reshape", {shape = {-1, 10}})              -- an op as a module
//   kiln.nn.Checkpoint(m)                                  -- m without its activations kept for backward:
//                                                          --   recomputed then (kiln_module_checkpoint)
//   kiln.nn.CrossEntropyLoss{...}, MSELoss, NLLLoss, BCEWithLogitsLoss   (nn_losses.cpp)
//
// An unknown layer name is nil (kiln.nn.Swish is nil until its plugin is
// loaded). Modules and their methods: nn_module.cpp.
#include <string>
#include <string_view>
#include <vector>

#include "nn_losses.hpp"
#include "nn_module.hpp"
#include "nn_shared.hpp"

namespace kiln::lua {
namespace {

// Positional arguments of the core layers, in PyTorch's order. Layers not
// listed take a table of options only.
struct Positional {
  const char* layer;
  std::vector<const char*> names;
};

const std::vector<Positional>& positional_layers() {
  static const std::vector<Positional> layers = {
      {"Linear", {"in_features", "out_features"}},
      {"Conv1d", {"in_channels", "out_channels", "kernel_size"}},
      {"Conv2d", {"in_channels", "out_channels", "kernel_size"}},
      {"ConvTranspose2d", {"in_channels", "out_channels", "kernel_size"}},
      {"DepthwiseSeparableConv2d", {"in_channels", "out_channels", "kernel_size"}},
      {"MaxPool2d", {"kernel_size"}},
      {"AvgPool2d", {"kernel_size"}},
      {"AdaptiveAvgPool2d", {"output_size"}},
      {"Dropout", {"p"}},
      {"BatchNorm1d", {"num_features"}},
      {"BatchNorm2d", {"num_features"}},
      {"LayerNorm", {"normalized_shape"}},
      {"Embedding", {"num_embeddings", "embedding_dim"}},
      {"MultiHeadAttention", {"embed_dim", "num_heads"}},
      {"TransformerBlock", {"embed_dim", "num_heads"}},
      {"LSTM", {"input_size", "hidden_size", "num_layers"}},
      {"GRU", {"input_size", "hidden_size", "num_layers"}},
      {"LeakyReLU", {"negative_slope"}},
      {"Softmax", {"dim"}},
      {"Flatten", {"start_dim", "end_dim"}},
      {"GELU", {"approximate"}},
      {"MaxPool1d", {"kernel_size"}},
      {"AvgPool1d", {"kernel_size"}},
      {"GroupNorm", {"num_groups", "num_channels"}},
      {"InstanceNorm2d", {"num_features"}},
      {"PReLU", {"num_parameters"}},
  };
  return layers;
}

const std::vector<const char*>* positional_names(std::string_view layer) {
  for (const Positional& p : positional_layers())
    if (layer == p.layer) return &p.names;
  return nullptr;
}

// A table holding an options table's entries: its string keys (a
// positional table such as kernel_size = {3, 3} has integer keys instead).
bool is_options_table(lua_State* L, int index) {
  if (!lua_istable(L, index) || test_handle(L, index, kTensor)) return false;
  const bool array = lua_geti(L, index, 1) != LUA_TNIL;
  lua_pop(L, 1);
  return !array;
}

// Pushes the configuration of kiln.nn.<layer>(...): the one options table,
// or the positional arguments by name merged into the trailing options.
int push_layer_config(lua_State* L, const char* layer) {
  int n = lua_gettop(L);
  const bool has_options = n > 0 && is_options_table(L, n);
  lua_newtable(L);
  const int config = lua_gettop(L);
  if (has_options) {
    lua_pushnil(L);
    while (lua_next(L, n)) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_settable(L, config);
    }
    --n;
  }
  if (n == 0) return config;
  const std::vector<const char*>* names = positional_names(layer);
  if (!names)
    luaL_error(L, "kiln.nn.%s takes a table of options, e.g. kiln.nn.%s{...}; it has no positional arguments", layer,
               layer);
  if (size_t(n) > names->size()) {
    std::string list;
    for (const char* name : *names) list += (list.empty() ? "" : ", ") + std::string(name);
    luaL_error(L, "kiln.nn.%s takes at most %d positional arguments (%s), then a table of options; got %d", layer,
               int(names->size()), list.c_str(), n);
  }
  for (int i = 1; i <= n; ++i) {
    lua_pushvalue(L, i);
    lua_setfield(L, config, (*names)[size_t(i - 1)]);
  }
  return config;
}

// kiln.nn.<layer>(...): the layer type is upvalue 1.
int make_layer(lua_State* L) {
  const char* layer = lua_tostring(L, lua_upvalueindex(1));
  const int config = push_layer_config(L, layer);
  const AttrList attrs(L, config);
  kiln_module* m = nullptr;
  check(L, kiln_module_create(runtime(L), layer, attrs.data(), attrs.size(), &m));
  push_module(L, m);
  return 1;
}

// kiln.nn.Sequential{m1, m2, ...}
int make_sequential(lua_State* L) {
  const bool has_children = !lua_isnoneornil(L, 1);
  if (has_children) luaL_checktype(L, 1, LUA_TTABLE);
  kiln_module* seq = nullptr;
  check(L, kiln_sequential_create(runtime(L), &seq));
  push_module(L, seq);
  if (!has_children) return 1;
  const lua_Integer n = luaL_len(L, 1);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_geti(L, 1, i);
    if (!test_handle(L, -1, kModule))
      luaL_error(L, "kiln.nn.Sequential: entry %d is a %s; expected a module", int(i), luaL_typename(L, -1));
    check(L, kiln_sequential_append(seq, nullptr, check_module(L, -1)));
    lua_pop(L, 1);
  }
  return 1;
}

std::vector<const char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<const char*> pointers;
  for (const std::string& s : strings) pointers.push_back(s.c_str());
  return pointers;
}

// Adds node {name, module, {inputs...}} (the table on top) to `graph`.
void add_graph_node(lua_State* L, kiln_module* graph, int node_number) {
  const int node = lua_gettop(L);
  if (!lua_istable(L, node) || lua_geti(L, node, 1) != LUA_TSTRING)
    luaL_error(L, "kiln.nn.Graph: node %d must be {name, module, {inputs...}}", node_number);
  const std::string name = lua_tostring(L, -1);
  lua_geti(L, node, 2);
  if (!test_handle(L, -1, kModule))
    luaL_error(L, "kiln.nn.Graph: node '%s' has a %s where its module should be", name.c_str(),
               luaL_typename(L, -1));
  lua_geti(L, node, 3);
  const std::string what = "kiln.nn.Graph: inputs of node '" + name + "'";
  const std::vector<std::string> inputs = check_string_array(L, -1, what.c_str());
  const std::vector<const char*> pointers = c_strings(inputs);
  check(L, kiln_graph_add(graph, name.c_str(), check_module(L, -2), pointers.data(), pointers.size()));
  lua_settop(L, node);
}

// kiln.nn.Graph{inputs = {...}, nodes = {...}, outputs = {...}}
int make_graph(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  check_known_fields(L, 1, "kiln.nn.Graph", {"inputs", "nodes", "outputs"});
  lua_getfield(L, 1, "inputs");
  const std::vector<std::string> inputs = check_string_array(L, -1, "kiln.nn.Graph: inputs");
  const std::vector<const char*> input_names = c_strings(inputs);
  kiln_module* graph = nullptr;
  check(L, kiln_graph_create(runtime(L), input_names.data(), input_names.size(), &graph));
  push_module(L, graph);
  const int result = lua_gettop(L);
  if (lua_getfield(L, 1, "nodes") != LUA_TTABLE) luaL_error(L, "kiln.nn.Graph: 'nodes' must be an array of nodes");
  const int nodes = lua_gettop(L);
  for (lua_Integer i = 1; i <= luaL_len(L, nodes); ++i) {
    lua_geti(L, nodes, i);
    add_graph_node(L, graph, int(i));
    lua_pop(L, 1);
  }
  if (lua_getfield(L, 1, "outputs") != LUA_TNIL) {
    const std::vector<std::string> outputs = check_string_array(L, -1, "kiln.nn.Graph: outputs");
    const std::vector<const char*> output_names = c_strings(outputs);
    check(L, kiln_graph_set_outputs(graph, output_names.data(), output_names.size()));
  }
  lua_settop(L, result);
  return 1;
}

// kiln.nn.Checkpoint(m)
int make_checkpoint(lua_State* L) {
  if (!test_handle(L, 1, kModule))
    luaL_error(L, "kiln.nn.Checkpoint: argument 1 is a %s; expected a module", luaL_typename(L, 1));
  kiln_module* m = nullptr;
  check(L, kiln_module_checkpoint(runtime(L), check_module(L, 1), &m));
  push_module(L, m);
  return 1;
}

// kiln.nn.op(name, attrs)
int make_op_module(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  const kiln_op* op = nullptr;
  check(L, kiln_op_find(runtime(L), name, &op));
  const AttrList attrs(L, 2);
  kiln_module* m = nullptr;
  check(L, kiln_module_from_op(runtime(L), op, attrs.data(), attrs.size(), &m));
  push_module(L, m);
  return 1;
}

constexpr luaL_Reg kFunctions[] = {
    {"Sequential", guarded<make_sequential>},
    {"Graph", guarded<make_graph>},
    {"Checkpoint", guarded<make_checkpoint>},
    {"op", guarded<make_op_module>},
    {nullptr, nullptr},
};

}  // namespace

void open_nn(lua_State* L) {
  define_module_kind(L);
  push_subtable(L, -1, "nn");
  luaL_setfuncs(L, kFunctions, 0);
  add_losses(L, -1);
  set_registered_constructors(L, KILN_REG_LAYER, guarded<make_layer>);
  lua_pop(L, 1);
}

}  // namespace kiln::lua
