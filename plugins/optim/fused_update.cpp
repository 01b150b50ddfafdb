#include "fused_update.hpp"

#include <algorithm>

namespace kiln_optim {
namespace {

// What the parameters of one op call share.
struct BucketKey {
  kiln_device_type device;
  int device_index;
  kiln_dtype dtype;
  int64_t step;
  bool operator==(const BucketKey&) const = default;
};

BucketKey key_of(const FusedParameter& p) {
  BucketKey key{};
  check(host().tensor_device(p.param, &key.device, &key.device_index));
  kiln_tensor_desc desc;
  check(host().tensor_describe(p.param, &desc));
  key.dtype = desc.dtype;
  key.step = p.step;
  return key;
}

struct Bucket {
  BucketKey key;
  std::vector<const FusedParameter*> members;
};

}  // namespace

void run_fused(kiln_runtime* rt, const char* op, std::span<const FusedParameter> params, size_t n_state,
               const FusedAttrs& attrs_for) {
  const kiln_op* handle = nullptr;
  check(host().op_find(rt, op, &handle));
  std::vector<Bucket> buckets;  // few: a linear search beats a map
  for (const FusedParameter& p : params) {
    const BucketKey key = key_of(p);
    auto it = std::find_if(buckets.begin(), buckets.end(), [&](const Bucket& b) { return b.key == key; });
    if (it == buckets.end()) it = buckets.insert(buckets.end(), Bucket{key, {}});
    it->members.push_back(&p);
  }
  for (const Bucket& b : buckets) {
    std::vector<kiln_tensor*> inputs;
    inputs.reserve(b.members.size() * (2 + n_state));
    for (const FusedParameter* p : b.members) inputs.push_back(p->param);
    for (const FusedParameter* p : b.members) inputs.push_back(p->grad);
    for (size_t s = 0; s < n_state; ++s)
      for (const FusedParameter* p : b.members) inputs.push_back(p->state[s]);
    const std::vector<kiln_attr> attrs = attrs_for(b.key.step);
    size_t n_outputs = 0;
    check(host().op_call(rt, handle, inputs.data(), inputs.size(), attrs.data(), attrs.size(), nullptr, 0, &n_outputs));
  }
}

}  // namespace kiln_optim
