// The optimizer's state as named tensors: listing copies of it, and loading
// such a list back, all or nothing.
#include <algorithm>
#include <charconv>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "guard.hpp"
#include "handles.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "kiln/error.hpp"
#include "optim/optimizer_handle.hpp"

using kiln::Status;
using kiln::abi::guarded;
using kiln::abi::StateListing;

namespace kiln::abi {

void rebuild_state_listing(kiln_optimizer& opt) {
  std::vector<StateListing> listing{{"step"}};
  for (size_t i = 0; i < opt.params.size(); ++i) {
    const OptimizedParameter& p = opt.params[i];
    if (!p.has_state) continue;
    listing.push_back({str_cat(i, ".step"), i});
    for (size_t s = 0; s < p.state.names.size(); ++s) listing.push_back({str_cat(i, ".", p.state.names[s]), i, s});
  }
  opt.listing = std::move(listing);
}

}  // namespace kiln::abi

namespace {

constexpr std::string_view kStep = "step";

// A new tensor with the elements of `t`, on `device`, sharing no memory with `t`.
kiln::Tensor copy_on(kiln::Runtime& rt, const kiln::Tensor& t, kiln::Device device) {
  if (t.device() == device) return rt.call1("copy", {t});
  return rt.call1("to", {t}, {{"device", to_string(device)}});
}

kiln::Tensor count_tensor(kiln::Runtime& rt, int64_t count) {
  kiln::Tensor t = rt.empty(kiln::Shape{}, kiln::DType::i64);
  *t.data<int64_t>() = count;
  return t;
}

// The step count held by entry `name`: an i64 scalar, not negative.
int64_t read_count(const kiln_optimizer& opt, std::string_view name, const kiln::Tensor& t) {
  KILN_CHECK(t.dtype() == kiln::DType::i64 && t.rank() == 0, Status::shape_mismatch, opt.who(), ": entry '", name,
             "' is ", describe(t), "; a step count is an i64 scalar");
  const int64_t count = *copy_on(opt.runtime->runtime, t, kiln::Device::cpu()).data<int64_t>();
  KILN_CHECK(count >= 0, Status::invalid_argument, opt.who(), ": entry '", name, "' is ", count,
             "; a step count cannot be negative");
  return count;
}

// The parameter index of an entry named "<index>.<state>", or an error.
size_t parameter_of(const kiln_optimizer& opt, std::string_view name) {
  const size_t dot = name.find('.');
  size_t index = 0;
  const char* end = name.data() + std::min(dot, name.size());
  const auto parsed = std::from_chars(name.data(), end, index);
  KILN_CHECK(dot != std::string_view::npos && dot > 0 && parsed.ec == std::errc() && parsed.ptr == end,
             Status::invalid_argument, opt.who(), ": unexpected entry '", name,
             "'; entries are named 'step', '<parameter>.step' or '<parameter>.<state>'");
  KILN_CHECK(index < opt.params.size(), Status::invalid_argument, opt.who(), ": unexpected entry '", name,
             "'; the optimizer has ", opt.params.size(), " parameter(s)");
  return index;
}

struct LoadedParameter {
  bool present = false;
  int64_t steps = 0;
  kiln::abi::ParameterState state;
};

using GivenEntries = std::map<std::string, const kiln_tensor*, std::less<>>;

// Parameter `index`'s entries in `given` (its step count and every state
// tensor init_state makes, each shaped and typed as made), as a new state.
LoadedParameter load_parameter(const kiln_optimizer& opt, size_t index, const GivenEntries& given) {
  const kiln::abi::OptimizedParameter& p = opt.params[index];
  const kiln::abi::ParameterState fresh = p.has_state ? kiln::abi::ParameterState{} : make_parameter_state(opt, p);
  const kiln::abi::ParameterState& layout = p.has_state ? p.state : fresh;

  const std::string prefix = kiln::str_cat(index, ".");
  std::string kept = "step";
  for (const std::string& n : layout.names) kept += ", " + n;
  for (auto it = given.lower_bound(prefix); it != given.end() && it->first.starts_with(prefix); ++it) {
    const std::string_view rest = std::string_view(it->first).substr(prefix.size());
    KILN_CHECK(rest == kStep || std::find(layout.names.begin(), layout.names.end(), rest) != layout.names.end(),
               Status::invalid_argument, opt.who(), ": unexpected entry '", it->first, "'; parameter ", index,
               " keeps: ", kept);
  }
  auto entry = [&](std::string_view name) {
    const std::string full = prefix + std::string(name);
    const auto it = given.find(full);
    KILN_CHECK(it != given.end(), Status::invalid_argument, opt.who(), ": entry '", full, "' is missing; parameter ",
               index, " keeps: ", kept);
    return std::pair{full, it->second};
  };

  LoadedParameter loaded;
  loaded.present = true;
  const auto [step_name, step_tensor] = entry(kStep);
  loaded.steps = read_count(opt, step_name, step_tensor->tensor);
  kiln::Runtime& rt = opt.runtime->runtime;
  const kiln::Device device = p.handle[0]->tensor.device();
  for (size_t s = 0; s < layout.names.size(); ++s) {
    const auto [name, t] = entry(layout.names[s]);
    const kiln::Tensor& want = layout.tensors[s]->tensor;
    KILN_CHECK(t->tensor.shape() == want.shape(), Status::shape_mismatch, opt.who(), ": entry '", name, "' has shape ",
               to_string(t->tensor.shape()), ", the state needs ", to_string(want.shape()));
    KILN_CHECK(t->tensor.dtype() == want.dtype(), Status::dtype_mismatch, opt.who(), ": entry '", name, "' is ",
               dtype_name(t->tensor.dtype()), ", the state is ", dtype_name(want.dtype()));
    loaded.state.names.push_back(layout.names[s]);
    loaded.state.tensors.adopt(kiln::abi::new_handle(opt.runtime, copy_on(rt, t->tensor, device)));
  }
  return loaded;
}

GivenEntries index_entries(const kiln_optimizer& opt, const char* const* names, kiln_tensor* const* tensors, size_t n) {
  KILN_CHECK((names && tensors) || n == 0, Status::invalid_argument, opt.who(), ": 'names' or 'tensors' is NULL with ",
             n, " entries");
  GivenEntries given;
  for (size_t i = 0; i < n; ++i) {
    KILN_CHECK(names[i] && tensors[i], Status::invalid_argument, opt.who(), ": entry ", i, " has a NULL ",
               names[i] ? "tensor" : "name");
    kiln::abi::check_owner(opt.runtime, tensors[i], "tensors");
    KILN_CHECK(given.emplace(names[i], tensors[i]).second, Status::invalid_argument, opt.who(), ": entry '", names[i],
               "' is given twice");
  }
  return given;
}

}  // namespace

extern "C" {

kiln_status kiln_optimizer_state_count(const kiln_optimizer* opt, size_t* out) {
  KILN_REQUIRE(opt, out);
  *out = opt->listing.size();
  return KILN_OK;
}

kiln_status kiln_optimizer_state_get(const kiln_optimizer* opt, size_t index, const char** name, kiln_tensor** out) {
  KILN_REQUIRE(opt, name, out);
  return guarded(__func__, [&] {
    KILN_CHECK(index < opt->listing.size(), Status::invalid_argument, opt->who(), ": state entry ", index,
               " does not exist; there are ", opt->listing.size(), " (see kiln_optimizer_state_count)");
    const StateListing& e = opt->listing[index];
    kiln::Runtime& rt = opt->runtime->runtime;
    kiln::NoGradGuard no_grad(rt);
    kiln::Tensor copy;
    if (e.param == StateListing::kNone) {
      copy = count_tensor(rt, opt->steps);
    } else if (e.slot == StateListing::kNone) {
      copy = count_tensor(rt, opt->params[e.param].steps);
    } else {
      const kiln::Tensor& t = opt->params[e.param].state.tensors[e.slot]->tensor;
      copy = copy_on(rt, t, t.device());
    }
    *out = kiln::abi::new_handle(opt->runtime, std::move(copy));
    *name = e.name.c_str();
  });
}

kiln_status kiln_optimizer_state_load(kiln_optimizer* opt, const char* const* names, kiln_tensor* const* tensors,
                                      size_t n) {
  KILN_REQUIRE(opt);
  return guarded(__func__, [&] {
    kiln::NoGradGuard no_grad(opt->runtime->runtime);
    const GivenEntries given = index_entries(*opt, names, tensors, n);
    const auto step = given.find(kStep);
    KILN_CHECK(step != given.end(), Status::invalid_argument, opt->who(), ": entry 'step' is missing");

    // Every entry is checked and copied before anything of the optimizer changes.
    for (const auto& [name, t] : given)
      if (name != kStep) parameter_of(*opt, name);
    const int64_t steps = read_count(*opt, kStep, step->second->tensor);
    std::vector<LoadedParameter> loaded(opt->params.size());
    for (size_t i = 0; i < opt->params.size(); ++i) {
      const std::string prefix = kiln::str_cat(i, ".");
      const auto first = given.lower_bound(prefix);
      if (first != given.end() && first->first.starts_with(prefix)) loaded[i] = load_parameter(*opt, i, given);
    }

    for (size_t i = 0; i < opt->params.size(); ++i) {
      kiln::abi::OptimizedParameter& p = opt->params[i];
      p.has_state = loaded[i].present;
      p.steps = loaded[i].steps;
      p.state = std::move(loaded[i].state);
    }
    opt->steps = steps;
    kiln::abi::rebuild_state_listing(*opt);
  });
}

}  // extern "C"
