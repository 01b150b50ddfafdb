// Optimizer handles through the C API: creation over parameter groups,
// reference counting and the groups' hyper-parameters.
#include <cmath>
#include <span>
#include <utility>

#include "guard.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"
#include "plugin/plugin_call.hpp"
#include "optim/optimizer_handle.hpp"

using kiln::Status;
using kiln::abi::guarded;

kiln_optimizer::kiln_optimizer(kiln_runtime* rt, std::shared_ptr<const kiln::abi::OptimizerEntry> entry)
    : runtime(rt),
      type(std::move(entry)),
      who_(kiln::abi::describe_registered("optimizer", type->name, type->plugin_name)) {
  kiln_runtime_retain(rt);
}

kiln_optimizer::~kiln_optimizer() {
  // Tensors and the plugin's type go while the runtime still lives.
  params.clear();
  groups.clear();
  creation_hyper = kiln::abi::Config();
  type.reset();
  kiln_runtime_release(runtime);
}

namespace kiln::abi {

void check_hyper(const kiln_optimizer& opt, const Config& hyper) {
  const kiln_optimizer_type& t = opt.type->type;
  if (t.check_hyper) check_plugin_call(t.check_hyper(t.user, hyper.data(), hyper.size()), opt.who());
}

}  // namespace kiln::abi

namespace {

bool is_number(const kiln_attr& a) { return a.type == KILN_ATTR_INT || a.type == KILN_ATTR_FLOAT; }

// The parameter `index` of `params` is not NULL, is a floating-point tensor
// of the optimizer's runtime, and is in no group yet (nor twice in `params`).
void check_new_parameter(const kiln_optimizer& opt, std::span<kiln_tensor* const> params, size_t index) {
  const kiln_tensor* p = params[index];
  KILN_CHECK(p != nullptr, Status::invalid_argument, opt.who(), ": params[", index, "] is NULL");
  kiln::abi::check_owner(opt.runtime, p, "params");
  KILN_CHECK(kiln::is_floating(p->tensor.dtype()), Status::dtype_mismatch, opt.who(), ": params[", index, "] is ",
             describe(p->tensor), "; optimizers update floating-point tensors");
  for (size_t i = 0; i < opt.params.size(); ++i)
    KILN_CHECK(!opt.params[i].handle[0]->tensor.same(p->tensor), Status::invalid_argument, opt.who(), ": params[",
               index, "] is already parameter ", i, " (in group ", opt.params[i].group,
               "); a parameter may belong to one group only");
  for (size_t i = 0; i < index; ++i)
    KILN_CHECK(!params[i]->tensor.same(p->tensor), Status::invalid_argument, opt.who(), ": params[", index,
               "] is params[", i, "] again; a parameter may belong to one group only");
}

// Adds a group made of `params` with `hyper` (checked), or changes nothing.
void add_group(kiln_optimizer& opt, kiln_tensor* const* params, size_t n_params, kiln::abi::Config hyper) {
  KILN_CHECK(n_params > 0, Status::invalid_argument, opt.who(), ": a parameter group needs at least one parameter");
  KILN_CHECK(params != nullptr, Status::invalid_argument, opt.who(), ": 'params' is NULL with ", n_params, " entries");
  const std::span<kiln_tensor* const> given(params, n_params);
  for (size_t i = 0; i < given.size(); ++i) check_new_parameter(opt, given, i);
  kiln::abi::check_hyper(opt, hyper);

  std::vector<kiln::abi::OptimizedParameter> added(n_params);
  for (size_t i = 0; i < n_params; ++i) {
    added[i].handle.retain(params[i]);
    added[i].group = opt.groups.size();
  }
  opt.params.reserve(opt.params.size() + n_params);
  opt.groups.push_back(std::move(hyper));
  for (auto& p : added) opt.params.push_back(std::move(p));
}

const kiln_attr& number_entry(const kiln_optimizer& opt, size_t group, const char* name) {
  KILN_CHECK(group < opt.groups.size(), Status::invalid_argument, opt.who(), ": group ", group,
             " does not exist; the optimizer has ", opt.groups.size(), " group(s)");
  const kiln_attr* entry = opt.groups[group].find(name);
  if (!entry) {
    std::string known;
    for (size_t i = 0; i < opt.groups[group].size(); ++i)
      if (is_number(opt.groups[group][i]))
        known += (known.empty() ? "" : ", ") + std::string(opt.groups[group][i].name);
    kiln::throw_error(Status::not_found,
                      kiln::str_cat(opt.who(), " has no hyper-parameter '", name, "'; its numbers are: ", known));
  }
  KILN_CHECK(is_number(*entry), Status::invalid_argument, opt.who(), ": hyper-parameter '", name,
             "' is not a number; only numbers can be read or set after creation");
  return *entry;
}

}  // namespace

extern "C" {

kiln_status kiln_optimizer_create(kiln_runtime* rt, const char* type, kiln_tensor* const* params, size_t n_params,
                                  const kiln_attr* hyper, size_t n_hyper, kiln_optimizer** out) {
  KILN_REQUIRE(rt, type, out);
  return guarded(__func__, [&] {
    auto opt = std::make_unique<kiln_optimizer>(rt, rt->plugins.optimizer(type));
    opt->creation_hyper = opt->type->schema.make(hyper, n_hyper);
    add_group(*opt, params, n_params, opt->creation_hyper);
    kiln::abi::rebuild_state_listing(*opt);
    *out = opt.release();
  });
}

kiln_status kiln_optimizer_add_group(kiln_optimizer* opt, kiln_tensor* const* params, size_t n_params,
                                     const kiln_attr* hyper, size_t n_hyper) {
  KILN_REQUIRE(opt);
  return guarded(__func__, [&] {
    add_group(*opt, params, n_params, opt->type->schema.make(opt->creation_hyper, hyper, n_hyper));
  });
}

void kiln_optimizer_retain(kiln_optimizer* opt) {
  if (opt) opt->refs.fetch_add(1, std::memory_order_relaxed);
}

void kiln_optimizer_release(kiln_optimizer* opt) {
  if (opt && opt->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete opt;
}

kiln_status kiln_optimizer_group_count(const kiln_optimizer* opt, size_t* out) {
  KILN_REQUIRE(opt, out);
  *out = opt->groups.size();
  return KILN_OK;
}

kiln_status kiln_optimizer_get_hyper(const kiln_optimizer* opt, size_t group, const char* name, double* out) {
  KILN_REQUIRE(opt, name, out);
  return guarded(__func__, [&] {
    const kiln_attr& entry = number_entry(*opt, group, name);
    *out = entry.type == KILN_ATTR_INT ? double(entry.value.i) : entry.value.f;
  });
}

kiln_status kiln_optimizer_set_hyper(kiln_optimizer* opt, size_t group, const char* name, double value) {
  KILN_REQUIRE(opt, name);
  return guarded(__func__, [&] {
    const kiln_attr& entry = number_entry(*opt, group, name);
    kiln_attr changed = entry;
    if (entry.type == KILN_ATTR_INT) {
      KILN_CHECK(std::trunc(value) == value && std::abs(value) < 0x1p62, Status::invalid_argument, opt->who(),
                 ": hyper-parameter '", name, "' is an integer; got ", value);
      changed.value.i = int64_t(value);
    } else {
      changed.value.f = value;
    }
    kiln::abi::Config candidate = opt->groups[group];
    candidate.set(changed);
    kiln::abi::check_hyper(*opt, candidate);
    opt->groups[group] = std::move(candidate);
  });
}

kiln_status kiln_optimizer_step_count(const kiln_optimizer* opt, int64_t* out) {
  KILN_REQUIRE(opt, out);
  *out = opt->steps;
  return KILN_OK;
}

}  // extern "C"
