// What a kiln_loader handle is: the pipeline engine over a data source and
// its transforms (on which it holds references), and where batches go.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "data/data_handles.hpp"
#include "handle_ref.hpp"
#include "kiln/data/loader.hpp"

namespace kiln::abi {

void retain_data_source(kiln_data_source* src);
void retain_transform(kiln_transform* tr);
using DataSourceRef = HandleRef<kiln_data_source, retain_data_source, kiln_data_source_release>;
using TransformRef = HandleRef<kiln_transform, retain_transform, kiln_transform_release>;

// Makes example `index` of `source` and runs `transforms` on it in order,
// each from `seed`; throws the plugin's error naming the source or transform.
data::NamedTensors make_transformed_example(const kiln_data_source& source, const std::vector<TransformRef>& transforms,
                                            int64_t index, uint64_t seed);

// A new example handle holding `batch`'s fields.
kiln_example* deliver_batch(kiln_runtime* rt, data::NamedTensors batch);

// What copies a loader's batches to GPU `device`: the runtime's transfer
// queue and caching allocator for it.
std::shared_ptr<data::DeviceStager> make_device_stager(Runtime& rt, Device device);

}  // namespace kiln::abi

struct kiln_loader {
  std::atomic<int64_t> refs{1};
  kiln::abi::DataSourceRef source;
  std::vector<kiln::abi::TransformRef> transforms;
  // Last: destroyed first, so its workers stop while the source and the
  // transforms they call still live.
  std::unique_ptr<kiln::data::Loader> engine;
};
