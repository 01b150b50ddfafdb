// kiln.data: data sources, transforms and loaders.
//
//   local src = kiln.data.source("idx", {images = "train-images-idx3-ubyte.gz",
//                                        labels = "train-labels-idx1-ubyte.gz"})
//   #src                        -- number of examples
//   src:get(1)                  -- example 1 (1-based) as {input = <tensor>, target = <tensor>}
//
//   local tr = kiln.data.transform("normalize", {mean = {0.5}, std = {0.5}})
//   tr:apply(example, seed)     -- a new table with the transformed fields (seed: random choices)
//
//   local loader = kiln.data.loader(src, {batch_size = 64, shuffle = true, seed = 1, drop_last = false,
//                                         workers = 2, prefetch = 4, transforms = {tr},
//                                         rank = 0, world_size = 1, device = "cpu"})
//   #loader                     -- batches per epoch
//   loader:examples()           -- examples per epoch (of this rank's shard)
//   for batch in loader:epoch(0) do ... batch.input, batch.target ... end
//                               -- epochs are numbered from 0, as in the trainer's metrics; the
//                               -- order and the transforms' draws depend on (seed, epoch) only
//   loader:stats()              -- {batches=, last_wait_seconds=, total_wait_seconds=, max_ready=, device_wait_seconds=}
#include "data.hpp"

#include <vector>

#include "dist.hpp"
#include "nn_shared.hpp"
#include "sandbox.hpp"

namespace kiln::lua {
namespace {

kiln_data_source* check_source(lua_State* L, int index) {
  return static_cast<kiln_data_source*>(check_handle(L, index, kSource));
}
kiln_transform* check_transform(lua_State* L, int index) {
  return static_cast<kiln_transform*>(check_handle(L, index, kTransform));
}

// kiln.data.source(type, config)
int make_source(lua_State* L) {
  const char* type = luaL_checkstring(L, 1);
  check_sandboxed_source(L, type);
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  const AttrList config(L, 2, {}, {"dtype"});
  kiln_data_source* src = nullptr;
  check(L, kiln_data_source_create(runtime(L), type, config.data(), config.size(), &src));
  push_handle(L, src, kSource);
  return 1;
}

int source_len(lua_State* L) {
  int64_t n = 0;
  check(L, kiln_data_source_length(check_source(L, 1), &n));
  lua_pushinteger(L, n);
  return 1;
}

int source_get(lua_State* L) {
  kiln_data_source* src = check_source(L, 1);
  const lua_Integer index = luaL_checkinteger(L, 2);
  int64_t n = 0;
  check(L, kiln_data_source_length(src, &n));
  if (index < 1 || index > n)
    luaL_error(L, "source:get(%I): the source has %I examples; expected an index in 1 .. %I", index,
               lua_Integer(n), lua_Integer(n));
  kiln_example* raw = nullptr;
  check(L, kiln_data_source_get(src, index - 1, &raw));
  const ExampleRef ex(raw, kiln_example_release);
  push_example(L, ex.get());
  return 1;
}

constexpr luaL_Reg kSourceMethods[] = {
    {"get", guarded<source_get>},
    {nullptr, nullptr},
};

// kiln.data.transform(type, config)
int make_transform(lua_State* L) {
  const char* type = luaL_checkstring(L, 1);
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  const AttrList config(L, 2, {}, {"dtype"});
  kiln_transform* tr = nullptr;
  check(L, kiln_transform_create(runtime(L), type, config.data(), config.size(), &tr));
  push_handle(L, tr, kTransform);
  return 1;
}

// tr:apply(example, seed)
int transform_apply(lua_State* L) {
  kiln_transform* tr = check_transform(L, 1);
  const ExampleRef ex = check_example(L, 2);
  const lua_Integer seed = luaL_optinteger(L, 3, 0);
  check(L, kiln_transform_apply(tr, ex.get(), uint64_t(seed)));
  push_example(L, ex.get());
  return 1;
}

constexpr luaL_Reg kTransformMethods[] = {
    {"apply", guarded<transform_apply>},
    {nullptr, nullptr},
};

std::vector<kiln_transform*> check_transforms(lua_State* L, int options) {
  std::vector<kiln_transform*> transforms;
  if (lua_isnoneornil(L, options) || lua_getfield(L, options, "transforms") == LUA_TNIL) return transforms;
  if (!lua_istable(L, -1)) luaL_error(L, "kiln.data.loader: 'transforms' must be an array of transforms");
  for (lua_Integer i = 1; i <= luaL_len(L, -1); ++i) {
    lua_geti(L, -1, i);
    if (!test_handle(L, -1, kTransform))
      luaL_error(L, "kiln.data.loader: transforms[%d] is a %s; expected a kiln.data.transform", int(i),
                 luaL_typename(L, -1));
    transforms.push_back(check_transform(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return transforms;
}

kiln_loader_options check_loader_options(lua_State* L, int options) {
  check_known_fields(L, options, "kiln.data.loader",
                     {"batch_size", "shuffle", "seed", "drop_last", "workers", "prefetch", "transforms", "rank",
                      "world_size", "shard", "device"});
  kiln_loader_options o{};
  o.size = sizeof o;
  o.batch_size = opt_integer_field(L, options, "batch_size", 1);
  o.shuffle = opt_boolean_field(L, options, "shuffle", false);
  o.seed = uint64_t(opt_integer_field(L, options, "seed", 0));
  o.drop_last = opt_boolean_field(L, options, "drop_last", false);
  o.num_workers = int(opt_integer_field(L, options, "workers", 0));
  o.prefetch = int(opt_integer_field(L, options, "prefetch", 0));
  // shard = true: this process's part of the job's data (kiln.dist.rank()
  // of kiln.dist.world_size()), what data-parallel training needs.
  int job_rank_value = 0, job_world = 1;
  if (opt_boolean_field(L, options, "shard", false)) job_rank(L, &job_rank_value, &job_world);
  o.rank = int(opt_integer_field(L, options, "rank", job_rank_value));
  o.world_size = int(opt_integer_field(L, options, "world_size", job_world));
  o.device = KILN_DEVICE_CPU;
  if (!lua_isnoneornil(L, options) && lua_getfield(L, options, "device") != LUA_TNIL) {
    check_device(L, lua_gettop(L), &o.device, &o.device_index);
    lua_pop(L, 1);
  }
  return o;
}

// kiln.data.loader(source, options)
int make_loader(lua_State* L) {
  kiln_data_source* src = check_source(L, 1);
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  const kiln_loader_options options = check_loader_options(L, 2);
  const std::vector<kiln_transform*> transforms = check_transforms(L, 2);
  kiln_loader* loader = nullptr;
  check(L, kiln_loader_create(src, transforms.data(), transforms.size(), &options, &loader));
  push_handle(L, loader, kLoader);
  return 1;
}

void loader_length(lua_State* L, int64_t* examples, int64_t* batches) {
  check(L, kiln_loader_length(check_loader(L, 1), examples, batches));
}

int loader_len(lua_State* L) {
  int64_t examples = 0, batches = 0;
  loader_length(L, &examples, &batches);
  lua_pushinteger(L, batches);
  return 1;
}

int loader_examples(lua_State* L) {
  int64_t examples = 0, batches = 0;
  loader_length(L, &examples, &batches);
  lua_pushinteger(L, examples);
  return 1;
}

// The iterator of loader:epoch(e): the loader is upvalue 1.
int loader_next(lua_State* L) {
  kiln_loader* loader = check_loader(L, lua_upvalueindex(1));
  kiln_example* raw = nullptr;
  check(L, kiln_loader_next(loader, &raw));
  if (!raw) return 0;
  const ExampleRef batch(raw, kiln_example_release);
  push_example(L, batch.get());
  return 1;
}

int loader_epoch(lua_State* L) {
  kiln_loader* loader = check_loader(L, 1);
  const lua_Integer epoch = luaL_checkinteger(L, 2);
  luaL_argcheck(L, epoch >= 0, 2, "epochs are numbered from 0");
  check(L, kiln_loader_start_epoch(loader, epoch));
  lua_pushvalue(L, 1);
  lua_pushcclosure(L, guarded<loader_next>, 1);
  return 1;
}

int loader_stats(lua_State* L) {
  kiln_loader_stats stats{};
  stats.size = sizeof stats;
  check(L, kiln_loader_stats_get(check_loader(L, 1), &stats));
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, stats.batches);
  lua_setfield(L, -2, "batches");
  lua_pushnumber(L, stats.last_wait_seconds);
  lua_setfield(L, -2, "last_wait_seconds");
  lua_pushnumber(L, stats.total_wait_seconds);
  lua_setfield(L, -2, "total_wait_seconds");
  lua_pushinteger(L, stats.max_ready);
  lua_setfield(L, -2, "max_ready");
  lua_pushnumber(L, stats.device_wait_seconds);
  lua_setfield(L, -2, "device_wait_seconds");
  return 1;
}

constexpr luaL_Reg kLoaderMethods[] = {
    {"examples", guarded<loader_examples>},
    {"epoch", guarded<loader_epoch>},
    {"stats", guarded<loader_stats>},
    {nullptr, nullptr},
};

constexpr luaL_Reg kFunctions[] = {
    {"source", guarded<make_source>},
    {"transform", guarded<make_transform>},
    {"loader", guarded<make_loader>},
    {nullptr, nullptr},
};

}  // namespace

void open_data(lua_State* L) {
  define_kind(L, kSource, [](void* h) { kiln_data_source_release(static_cast<kiln_data_source*>(h)); },
              kSourceMethods);
  define_kind(L, kTransform, [](void* h) { kiln_transform_release(static_cast<kiln_transform*>(h)); },
              kTransformMethods);
  define_kind(L, kLoader, [](void* h) { kiln_loader_release(static_cast<kiln_loader*>(h)); }, kLoaderMethods);
  constexpr luaL_Reg kSourceMeta[] = {{"__len", guarded<source_len>}, {nullptr, nullptr}};
  constexpr luaL_Reg kLoaderMeta[] = {{"__len", guarded<loader_len>}, {nullptr, nullptr}};
  set_metamethods(L, kSource, kSourceMeta);
  set_metamethods(L, kLoader, kLoaderMeta);
  push_subtable(L, -1, "data");
  luaL_setfuncs(L, kFunctions, 0);
  lua_pop(L, 1);
}

}  // namespace kiln::lua
