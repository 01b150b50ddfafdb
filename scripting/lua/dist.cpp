// kiln.dist: the processes of a distributed job and their collectives
// (kiln_dist.h), from Lua.
//
//   local dist = kiln.dist
//   dist.in_job()                   -- started by kiln launch (or torchrun-style variables)?
//   dist.rank(), dist.world_size()  -- of the job (read from the environment); 0 and 1 outside one
//   local g = dist.group{backend = "gloo", timeout = 60, name = "eval",   -- all optional; ranks and
//                        rank = 0, world_size = 2, master_addr = "127.0.0.1", master_port = 29500}  -- address
//                                                                         -- default to the environment
//   dist.default()                  -- the runtime's default group (the one "ddp" uses)
//   g:rank(), g:world_size(), g:backend()
//   g:all_reduce(t, "mean")         -- in place; "sum" (the default), "mean", "max", "min"
//   g:broadcast(t, root)            -- t becomes rank root's
//   g:all_gather(input, output)     -- output: world_size x input's elements
//   g:reduce_scatter(input, output, "sum")
//   g:send(t, dst, tag), g:recv(t, src, tag), g:barrier()
//   local w = g:all_reduce(t, "sum", {async = true})   -- every operation: returns a work
//   w:wait(); w:done()
//   dist.all_reduce(t, "sum"), dist.broadcast(t, 0), ..., dist.barrier()   -- on the default group
//
// Every rank calls the same collectives in the same order; a tensor handed
// to an asynchronous operation must not be touched before its work is
// waited for. A peer that dies or hangs fails the operation with an error
// naming its rank.
#include "dist.hpp"

#include <string>

#include "nn_shared.hpp"
#include "sandbox.hpp"

namespace kiln::lua {
namespace {

constexpr const char* kGroup = "kiln.ProcessGroup";
constexpr const char* kWork = "kiln.Work";

kiln_process_group* check_group(lua_State* L, int index) {
  return static_cast<kiln_process_group*>(check_handle(L, index, kGroup));
}

// A sandboxed script reaches no network: it may not meet other processes.
void refuse_in_sandbox(lua_State* L) {
  if (sandboxed(L)) raise_message(L, "kiln.dist: a sandboxed script cannot connect to other processes");
}

kiln_process_group* default_group(lua_State* L) {
  refuse_in_sandbox(L);
  kiln_process_group* g = nullptr;
  check(L, kiln_process_group_default(runtime(L), &g));
  return g;
}

kiln_reduce_op check_reduce_op(lua_State* L, int index) {
  static const char* const names[] = {"sum", "mean", "max", "min", nullptr};
  static const kiln_reduce_op ops[] = {KILN_REDUCE_SUM, KILN_REDUCE_MEAN, KILN_REDUCE_MAX, KILN_REDUCE_MIN};
  return ops[luaL_checkoption(L, index, "sum", names)];
}

// An operation on a group: the method's self (arguments from 2), or the
// default group for kiln.dist.<op> (arguments from 1).
template <int (*Op)(lua_State*, kiln_process_group*, int)>
int on_group(lua_State* L) {
  return Op(L, check_group(L, 1), 2);
}

template <int (*Op)(lua_State*, kiln_process_group*, int)>
int on_default(lua_State* L) {
  kiln_process_group* g = default_group(L);
  struct Release {
    kiln_process_group* g;
    ~Release() { kiln_process_group_release(g); }
  } release{g};
  return Op(L, g, 1);
}

// Runs `start` (a collective taking a kiln_work** last) blocking, or, with
// {async = true} at `options`, pushes the work to wait on.
template <class Start>
int run(lua_State* L, int options, Start start) {
  const bool async = !lua_isnoneornil(L, options) && (luaL_checktype(L, options, LUA_TTABLE),
                                                       check_known_fields(L, options, "options", {"async"}),
                                                       opt_boolean_field(L, options, "async", false));
  if (!async) {
    check(L, start(nullptr));
    return 0;
  }
  kiln_work* work = nullptr;
  check(L, start(&work));
  push_handle(L, work, kWork);
  return 1;
}

int all_reduce(lua_State* L, kiln_process_group* g, int a) {
  kiln_tensor* t = check_tensor(L, a);
  const kiln_reduce_op op = check_reduce_op(L, a + 1);
  return run(L, a + 2, [&](kiln_work** w) { return kiln_process_group_all_reduce(g, t, op, w); });
}

int broadcast(lua_State* L, kiln_process_group* g, int a) {
  kiln_tensor* t = check_tensor(L, a);
  const int root = int(luaL_optinteger(L, a + 1, 0));
  return run(L, a + 2, [&](kiln_work** w) { return kiln_process_group_broadcast(g, t, root, w); });
}

int all_gather(lua_State* L, kiln_process_group* g, int a) {
  kiln_tensor *in = check_tensor(L, a), *out = check_tensor(L, a + 1);
  return run(L, a + 2, [&](kiln_work** w) { return kiln_process_group_all_gather(g, in, out, w); });
}

int reduce_scatter(lua_State* L, kiln_process_group* g, int a) {
  kiln_tensor *in = check_tensor(L, a), *out = check_tensor(L, a + 1);
  const kiln_reduce_op op = check_reduce_op(L, a + 2);
  return run(L, a + 3, [&](kiln_work** w) { return kiln_process_group_reduce_scatter(g, in, out, op, w); });
}

int send(lua_State* L, kiln_process_group* g, int a) {
  kiln_tensor* t = check_tensor(L, a);
  const int dst = int(luaL_checkinteger(L, a + 1)), tag = int(luaL_optinteger(L, a + 2, 0));
  return run(L, a + 3, [&](kiln_work** w) { return kiln_process_group_send(g, t, dst, tag, w); });
}

int recv(lua_State* L, kiln_process_group* g, int a) {
  kiln_tensor* t = check_tensor(L, a);
  const int src = int(luaL_checkinteger(L, a + 1)), tag = int(luaL_optinteger(L, a + 2, 0));
  return run(L, a + 3, [&](kiln_work** w) { return kiln_process_group_recv(g, t, src, tag, w); });
}

int barrier(lua_State* L, kiln_process_group* g, int a) {
  return run(L, a, [&](kiln_work** w) { return kiln_process_group_barrier(g, w); });
}

int group_rank(lua_State* L, kiln_process_group* g, int) {
  int rank = 0, world = 1;
  check(L, kiln_process_group_rank(g, &rank, &world));
  lua_pushinteger(L, rank);
  return 1;
}

int group_world_size(lua_State* L, kiln_process_group* g, int) {
  int rank = 0, world = 1;
  check(L, kiln_process_group_rank(g, &rank, &world));
  lua_pushinteger(L, world);
  return 1;
}

int group_backend(lua_State* L) {
  lua_pushstring(L, kiln_process_group_backend(check_group(L, 1)));
  return 1;
}

// kiln.dist.group{...}
int make_group(lua_State* L) {
  if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TTABLE);
  check_known_fields(L, 1, "kiln.dist.group",
                     {"backend", "timeout", "name", "rank", "world_size", "master_addr", "master_port"});
  const std::string backend = opt_string_field(L, 1, "backend"), name = opt_string_field(L, 1, "name"),
                    addr = opt_string_field(L, 1, "master_addr");
  kiln_process_group_options o{};
  o.size = sizeof o;
  o.backend = backend.empty() ? nullptr : backend.c_str();
  o.name = name.empty() ? nullptr : name.c_str();
  o.master_addr = addr.empty() ? nullptr : addr.c_str();
  o.timeout_seconds = opt_number_field(L, 1, "timeout", 0);
  o.rank = int(opt_integer_field(L, 1, "rank", 0));
  o.world_size = int(opt_integer_field(L, 1, "world_size", 0));
  o.master_port = int(opt_integer_field(L, 1, "master_port", 0));
  kiln_process_group* g = nullptr;
  refuse_in_sandbox(L);
  check(L, kiln_process_group_create(runtime(L), &o, &g));
  push_handle(L, g, kGroup);
  return 1;
}

int push_default(lua_State* L) {
  push_handle(L, default_group(L), kGroup);
  return 1;
}

int in_job(lua_State* L) {
  int job = 0;
  check(L, kiln_dist_job(&job, nullptr, nullptr));
  lua_pushboolean(L, job);
  return 1;
}

int rank(lua_State* L) {
  int r = 0, w = 1;
  job_rank(L, &r, &w);
  lua_pushinteger(L, r);
  return 1;
}

int world_size(lua_State* L) {
  int r = 0, w = 1;
  job_rank(L, &r, &w);
  lua_pushinteger(L, w);
  return 1;
}

int work_wait(lua_State* L) {
  check(L, kiln_work_wait(static_cast<kiln_work*>(check_handle(L, 1, kWork))));
  return 0;
}

int work_done(lua_State* L) {
  int done = 0;
  check(L, kiln_work_done(static_cast<kiln_work*>(check_handle(L, 1, kWork)), &done));
  lua_pushboolean(L, done);
  return 1;
}

constexpr luaL_Reg kGroupMethods[] = {
    {"rank", guarded<on_group<group_rank>>},
    {"world_size", guarded<on_group<group_world_size>>},
    {"backend", guarded<group_backend>},
    {"all_reduce", guarded<on_group<all_reduce>>},
    {"broadcast", guarded<on_group<broadcast>>},
    {"all_gather", guarded<on_group<all_gather>>},
    {"reduce_scatter", guarded<on_group<reduce_scatter>>},
    {"send", guarded<on_group<send>>},
    {"recv", guarded<on_group<recv>>},
    {"barrier", guarded<on_group<barrier>>},
    {nullptr, nullptr},
};

constexpr luaL_Reg kWorkMethods[] = {
    {"wait", guarded<work_wait>},
    {"done", guarded<work_done>},
    {nullptr, nullptr},
};

constexpr luaL_Reg kFunctions[] = {
    {"in_job", guarded<in_job>},
    {"rank", guarded<rank>},
    {"world_size", guarded<world_size>},
    {"group", guarded<make_group>},
    {"default", guarded<push_default>},
    {"all_reduce", guarded<on_default<all_reduce>>},
    {"broadcast", guarded<on_default<broadcast>>},
    {"all_gather", guarded<on_default<all_gather>>},
    {"reduce_scatter", guarded<on_default<reduce_scatter>>},
    {"send", guarded<on_default<send>>},
    {"recv", guarded<on_default<recv>>},
    {"barrier", guarded<on_default<barrier>>},
    {nullptr, nullptr},
};

}  // namespace

void job_rank(lua_State* L, int* rank, int* world_size) { check(L, kiln_dist_job(nullptr, rank, world_size)); }

void open_dist(lua_State* L) {
  define_kind(L, kGroup, [](void* h) { kiln_process_group_release(static_cast<kiln_process_group*>(h)); },
              kGroupMethods);
  define_kind(L, kWork, [](void* h) { kiln_work_release(static_cast<kiln_work*>(h)); }, kWorkMethods);
  push_subtable(L, -1, "dist");
  luaL_setfuncs(L, kFunctions, 0);
  lua_pop(L, 1);
}

}  // namespace kiln::lua
