// Parallel strategies through the C API: made from a registered type, they
// hold a reference on their runtime and (through their type) on the plugin
// that made them.
#include "guard.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"
#include "optim/optimizer_handle.hpp"
#include "plugin/plugin_object.hpp"
#include "train/api_call.hpp"

using kiln::abi::guarded;

struct kiln_strategy {
  kiln_strategy(kiln_runtime* rt, std::shared_ptr<const kiln::abi::StrategyEntry> entry, const kiln_attr* config,
                size_t n_config)
      : object(rt, std::move(entry), config, n_config, "strategy") {}

  kiln::abi::PluginObject<kiln::abi::StrategyEntry> object;
};

extern "C" {

kiln_status kiln_strategy_create(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n_config,
                                 kiln_strategy** out) {
  KILN_REQUIRE(rt, type, out);
  return guarded(__func__, [&] {
    *out = new kiln_strategy(rt, rt->plugins.strategy(type), config, n_config);
  });
}

void kiln_strategy_release(kiln_strategy* s) { delete s; }

kiln_status kiln_strategy_rank(const kiln_strategy* s, int* rank, int* world_size) {
  KILN_REQUIRE(s, rank, world_size);
  return guarded(__func__, [&] {
    int r = 0, w = 0;
    const kiln::abi::PluginObject<kiln::abi::StrategyEntry>& object = s->object;
    object.check(object.type().rank(object.state(), &r, &w));
    KILN_CHECK(w >= 1 && r >= 0 && r < w, kiln::Status::internal, "strategy '", object.entry().name, "' of plugin '",
               object.entry().plugin_name, "' reported rank ", r, " of ", w, " processes");
    *rank = r;
    *world_size = w;
  });
}

kiln_status kiln_strategy_attach(kiln_strategy* s, kiln_module* model) {
  KILN_REQUIRE(s, model);
  return guarded(__func__, [&] {
    const auto& type = s->object.type();
    if (type.attach) s->object.check(type.attach(s->object.state(), model));
  });
}

kiln_status kiln_strategy_backward_begin(kiln_strategy* s, int sync) {
  KILN_REQUIRE(s);
  return guarded(__func__, [&] {
    const auto& type = s->object.type();
    if (type.backward_begin) s->object.check(type.backward_begin(s->object.state(), sync != 0 ? 1 : 0));
  });
}

kiln_status kiln_strategy_reduce_gradients(kiln_strategy* s, kiln_tensor* const* params, size_t n_params) {
  KILN_REQUIRE(s);
  return guarded(__func__, [&] {
    KILN_CHECK(params || n_params == 0, kiln::Status::invalid_argument, "'params' is NULL with ", n_params,
               " entries");
    for (size_t i = 0; i < n_params; ++i) {
      KILN_CHECK(params[i], kiln::Status::invalid_argument, "params[", i, "] is NULL");
      kiln::abi::check_owner(s->object.runtime(), params[i], "params");
    }
    s->object.check(s->object.type().reduce_gradients(s->object.state(), params, n_params));
  });
}

kiln_status kiln_strategy_optimizer_step(kiln_strategy* s, kiln_optimizer* opt) {
  KILN_REQUIRE(s, opt);
  return guarded(__func__, [&] {
    KILN_CHECK(opt->runtime == s->object.runtime(), kiln::Status::invalid_argument,
               "'opt' belongs to another runtime than the strategy");
    const auto& type = s->object.type();
    if (type.step_begin) s->object.check(type.step_begin(s->object.state()));
    kiln::train::check_call(kiln_optimizer_step(opt), "the optimizer step");
    if (type.step_end) s->object.check(type.step_end(s->object.state()));
  });
}

kiln_status kiln_strategy_state_owner(const kiln_strategy* s, const kiln_tensor* param, int* owner) {
  KILN_REQUIRE(s, param, owner);
  return guarded(__func__, [&] {
    const kiln::abi::PluginObject<kiln::abi::StrategyEntry>& object = s->object;
    kiln::abi::check_owner(object.runtime(), param, "param");
    int rank = 0, world = 1, r = -1;
    object.check(object.type().rank(object.state(), &rank, &world));
    if (object.type().state_owner) object.check(object.type().state_owner(object.state(), param, &r));
    KILN_CHECK(r >= -1 && r < world, kiln::Status::internal, "strategy '", object.entry().name, "' of plugin '",
               object.entry().plugin_name, "' said rank ", r, " of ", world, " owns a parameter's optimizer state");
    *owner = r;
  });
}

}  // extern "C"
