// The loader's two crossings between handles and the engine: examples made
// by the source and transforms become named tensors for the workers, and
// stacked batches become example handles for the caller.
#include <memory>

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

kiln_example* deliver_batch(kiln_runtime* rt, data::NamedTensors batch, Device device) {
  auto ex = std::make_unique<kiln_example>(rt);
  ex->fields.reserve(batch.size());
  for (data::NamedTensor& field : batch) {
    TensorRef delivered = TensorRef::adopt(new_handle(rt, std::move(field.tensor)));
    if (!device.is_cpu()) {
      // Not yet on a side stream: the copy runs in kiln_loader_next.
      kiln_tensor* copy = nullptr;
      const kiln_status status = kiln_tensor_to(delivered.get(), kiln_device_type(device.type), device.index, &copy);
      KILN_CHECK(status == KILN_OK, Status(status), "copying field '", field.name, "' to ", to_string(device), ": ",
                 kiln_last_error());
      delivered = TensorRef::adopt(copy);
    }
    ex->fields.push_back({std::move(field.name), delivered.get()});
    delivered.release();  // now the example's
  }
  return ex.release();
}

}  // namespace kiln::abi
