// Parallel strategies through the C API: made from a registered type, they
// hold a reference on their runtime and (through their type) on the plugin
// that made them.
#include "guard.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"
#include "plugin/plugin_call.hpp"

using kiln::abi::guarded;

struct kiln_strategy {
  kiln_strategy(kiln_runtime* rt, std::shared_ptr<const kiln::abi::StrategyEntry> entry)
      : runtime(rt), type(std::move(entry)) {
    kiln_runtime_retain(rt);
  }
  ~kiln_strategy() {
    if (state && type->type.destroy) type->type.destroy(state);
    kiln_runtime_release(runtime);
  }
  kiln_strategy(const kiln_strategy&) = delete;
  kiln_strategy& operator=(const kiln_strategy&) = delete;

  void check(kiln_status status, const char* callback) const {
    kiln::abi::check_plugin_call(status, kiln::str_cat("strategy '", type->name, "'"), type->plugin_name, callback);
  }

  kiln_runtime* runtime;
  std::shared_ptr<const kiln::abi::StrategyEntry> type;
  kiln::abi::Config config;
  void* state = nullptr;
};

extern "C" {

kiln_status kiln_strategy_create(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n_config,
                                 kiln_strategy** out) {
  KILN_REQUIRE(rt, type, out);
  return guarded(__func__, [&] {
    auto s = std::make_unique<kiln_strategy>(rt, rt->plugins.strategy(type));
    s->config = s->type->schema.make(config, n_config);
    const kiln_strategy_type& t = s->type->type;
    s->check(t.create(t.user, rt, s->config.data(), s->config.size(), &s->state), "create");
    *out = s.release();
  });
}

void kiln_strategy_release(kiln_strategy* s) { delete s; }

kiln_status kiln_strategy_rank(const kiln_strategy* s, int* rank, int* world_size) {
  KILN_REQUIRE(s, rank, world_size);
  return guarded(__func__, [&] {
    int r = 0, w = 0;
    s->check(s->type->type.rank(s->state, &r, &w), "rank");
    KILN_CHECK(w >= 1 && r >= 0 && r < w, kiln::Status::internal, "strategy '", s->type->name, "' of plugin '",
               s->type->plugin_name, "' reported rank ", r, " of ", w, " processes");
    *rank = r;
    *world_size = w;
  });
}

kiln_status kiln_strategy_reduce_gradients(kiln_strategy* s, kiln_tensor* const* params, size_t n_params) {
  KILN_REQUIRE(s);
  return guarded(__func__, [&] {
    KILN_CHECK(params || n_params == 0, kiln::Status::invalid_argument, "'params' is NULL with ", n_params,
               " entries");
    for (size_t i = 0; i < n_params; ++i) {
      KILN_CHECK(params[i], kiln::Status::invalid_argument, "params[", i, "] is NULL");
      kiln::abi::check_owner(s->runtime, params[i], "params");
    }
    s->check(s->type->type.reduce_gradients(s->state, params, n_params), "reduce_gradients");
  });
}

}  // extern "C"
