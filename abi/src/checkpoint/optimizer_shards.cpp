#include "checkpoint/optimizer_shards.hpp"

#include <charconv>
#include <cstdint>
#include <memory>

#include "handles.hpp"
#include "kiln/error.hpp"
#include "kiln/util/str_cat.hpp"
#include "optim/optimizer_handle.hpp"
#include "train/trainer.hpp"

namespace kiln::train {
namespace {

constexpr const char* kWhat = "gathering the optimizer's state from its owners";

using GroupRef = std::unique_ptr<kiln_process_group, decltype(&kiln_process_group_release)>;

GroupRef default_group(kiln_runtime* rt) {
  kiln_process_group* raw = nullptr;
  check_call(kiln_process_group_default(rt, &raw), kWhat);
  return GroupRef(raw, kiln_process_group_release);
}

// What precedes a parameter's state on the wire: its update count (-1 when
// its owner holds no state for it yet) and how many state tensors follow.
struct StateHeader {
  int64_t steps = -1;
  int64_t tensors = 0;
};

// A tensor of `values` (i64) on the device of `like`, where the group's
// backend can move it.
TensorRef i64_tensor_like(kiln_runtime* rt, const kiln_tensor* like, const int64_t* values, int64_t n, int rank) {
  kiln_tensor* host = nullptr;
  check_call(kiln_tensor_from_data(rt, values, size_t(n) * sizeof(int64_t), &n, rank, KILN_I64, &host), kWhat);
  const TensorRef on_host = TensorRef::adopt(host);
  kiln_device_type type = KILN_DEVICE_CPU;
  int index = 0;
  check_call(kiln_tensor_device(like, &type, &index), kWhat);
  kiln_tensor* moved = nullptr;
  check_call(kiln_tensor_to(host, type, index, &moved), kWhat);
  return TensorRef::adopt(moved);
}

void send_state(kiln_process_group* group, kiln_trainer& t, size_t index) {
  const abi::OptimizedParameter& p = t.config.optimizer->params[index];
  const StateHeader h{p.has_state ? p.steps : -1, int64_t(p.state.tensors.size())};
  const int64_t values[2] = {h.steps, h.tensors};
  const TensorRef header = i64_tensor_like(t.config.runtime.get(), p.handle[0], values, 2, 1);
  const int tag = int(index);
  check_call(kiln_process_group_send(group, header.get(), 0, tag, nullptr), kWhat);
  if (!p.has_state) return;
  for (size_t s = 0; s < p.state.tensors.size(); ++s)
    check_call(kiln_process_group_send(group, p.state.tensors[s], 0, tag, nullptr),
               str_cat(kWhat, ": sending '", index, ".", p.state.names[s], "'"));
}

void receive_state(kiln_process_group* group, kiln_trainer& t, size_t index, int owner, abi::StateTensors& out) {
  kiln_runtime* rt = t.config.runtime.get();
  const kiln_optimizer& opt = *t.config.optimizer.get();
  const abi::OptimizedParameter& p = opt.params[index];
  const int64_t blank[2] = {0, 0};
  const TensorRef header = i64_tensor_like(rt, p.handle[0], blank, 2, 1);
  const int tag = int(index);
  check_call(kiln_process_group_recv(group, header.get(), owner, tag, nullptr), kWhat);
  int64_t values[2] = {0, 0};
  check_call(kiln_tensor_read(header.get(), values, sizeof values), kWhat);
  const StateHeader h{values[0], values[1]};
  if (h.steps < 0) return;
  // The owner's state has the layout init_state makes: the same plugin
  // and hyper-parameters on every rank.
  const abi::ParameterState layout = abi::make_parameter_state(opt, p);
  KILN_CHECK(int64_t(layout.tensors.size()) == h.tensors, Status::invalid_state, kWhat, ": rank ", owner, " keeps ",
             h.tensors, " state tensor(s) for parameter ", index, ", but ", opt.who(), " makes ",
             layout.tensors.size());
  const TensorRef steps = i64_tensor_like(rt, p.handle[0], &h.steps, 1, 0);
  out.push_back({str_cat(index, ".step"), steps->tensor});
  for (size_t s = 0; s < layout.tensors.size(); ++s) {
    check_call(kiln_process_group_recv(group, layout.tensors[s], owner, tag, nullptr),
               str_cat(kWhat, ": receiving '", index, ".", layout.names[s], "' from rank ", owner));
    out.push_back({str_cat(index, ".", layout.names[s]), layout.tensors[s]->tensor});
  }
}

}  // namespace

std::vector<int> optimizer_state_owners(const kiln_trainer& t) {
  kiln_strategy* strategy = t.config.strategy;
  if (!strategy || t.world_size == 1) return {};
  std::vector<int> owners;
  bool sharded = false;
  for (const abi::OptimizedParameter& p : t.config.optimizer->params) {
    int owner = -1;
    check_call(kiln_strategy_state_owner(strategy, p.handle[0], &owner), "asking the strategy who keeps the state");
    owners.push_back(owner);
    sharded = sharded || owner >= 0;
  }
  return sharded ? owners : std::vector<int>{};
}

abi::StateTensors gather_owned_state(kiln_trainer& t, const std::vector<int>& owners) {
  abi::StateTensors received;
  if (owners.empty()) return received;
  const GroupRef group = default_group(t.config.runtime.get());
  // Parameter by parameter in the same order everywhere; only the owner
  // and rank 0 take part in each, rank 0's own state stays where it is.
  for (size_t i = 0; i < owners.size(); ++i) {
    if (owners[i] <= 0) continue;
    if (t.rank == owners[i]) send_state(group.get(), t, i);
    if (t.rank == 0) receive_state(group.get(), t, i, owners[i], received);
  }
  return received;
}

bool keeps_entry(const kiln_trainer& t, const std::vector<int>& owners, std::string_view name) {
  const size_t dot = name.find('.');
  if (owners.empty() || dot == std::string_view::npos) return true;
  size_t index = 0;
  const auto parsed = std::from_chars(name.data(), name.data() + dot, index);
  // A malformed name is kept, for the optimizer to refuse with its own message.
  if (parsed.ec != std::errc() || parsed.ptr != name.data() + dot || index >= owners.size()) return true;
  return owners[index] < 0 || owners[index] == t.rank;
}

}  // namespace kiln::train
