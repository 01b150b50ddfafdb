// The loader's crossings between handles and the engine: examples made by
// the source and transforms become named tensors for the workers, stacked
// batches become example handles for the caller, and batches bound for a GPU
// get the runtime's copy stream and device memory.
#include <memory>

#include "kiln/data/device_stager.hpp"
#include "kiln/runtime.hpp"

#include "data/example.hpp"
#include "data/loader.hpp"
#include "handles.hpp"

namespace kiln::abi {

void retain_data_source(kiln_data_source* src) {
  if (src) src->refs.fetch_add(1, std::memory_order_relaxed);
}

void retain_transform(kiln_transform* tr) {
  if (tr) tr->refs.fetch_add(1, std::memory_order_relaxed);
}

data::NamedTensors make_transformed_example(const kiln_data_source& source, const std::vector<TransformRef>& transforms,
                                            int64_t index, uint64_t seed) {
  const auto& src = source.object;
  kiln_example ex(src.runtime());
  src.check(src.type().get(src.state(), index, &ex));
  for (const TransformRef& transform : transforms) {
    const auto& tr = transform->object;
    tr.check(tr.type().apply(tr.state(), &ex, seed));
  }
  data::NamedTensors fields;
  fields.reserve(ex.fields.size());
  for (const kiln_example::Field& field : ex.fields) fields.push_back({field.name, field.tensor->tensor});
  return fields;
}

kiln_example* deliver_batch(kiln_runtime* rt, data::NamedTensors batch) {
  auto ex = std::make_unique<kiln_example>(rt);
  ex->fields.reserve(batch.size());
  for (data::NamedTensor& field : batch) {
    TensorRef delivered = TensorRef::adopt(new_handle(rt, std::move(field.tensor)));
    ex->fields.push_back({std::move(field.name), delivered.get()});
    delivered.release();  // now the example's
  }
  return ex.release();
}

std::shared_ptr<data::DeviceStager> make_device_stager(Runtime& rt, Device device) {
  auto memory = std::dynamic_pointer_cast<CachingAllocator>(rt.allocator(device));
  KILN_CHECK(memory, Status::internal, "the allocator of ", to_string(device),
             " is not stream-ordered, so input copies cannot run beside compute");
  return std::make_shared<data::DeviceStager>(rt.transfer_queue(device), std::move(memory));
}

}  // namespace kiln::abi
