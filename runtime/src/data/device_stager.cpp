#include "kiln/data/device_stager.hpp"

#include <algorithm>

#include "kiln/error.hpp"

namespace kiln::data {

InFlightCopy::~InFlightCopy() {
  // The source must outlive the copy that reads it; members go after this body.
  if (!queue_->completed(ticket_)) queue_->wait(ticket_);
  queue_->release(ticket_);
  if (probe_) queue_->release_probe(probe_);
}

bool InFlightCopy::settle(double* seconds) noexcept {
  if (!probe_) return queue_->completed(ticket_);
  // The probe ends on the compute stream after its wait for the copy, so a
  // measured probe also means a finished copy.
  const std::optional<double> waited = queue_->probe_seconds(probe_);
  if (!waited) return false;
  *seconds += *waited;
  return true;
}

DeviceStager::DeviceStager(std::shared_ptr<TransferQueue> queue, std::shared_ptr<CachingAllocator> device_memory)
    : queue_(std::move(queue)), device_memory_(std::move(device_memory)) {
  KILN_CHECK(queue_->device() == device_memory_->device(), Status::internal, "a transfer queue for ",
             to_string(queue_->device()), " was paired with the memory of ", to_string(device_memory_->device()));
}

StagedBatch DeviceStager::stage(NamedTensors host_batch) const {
  const Device device = queue_->device();
  StagedBatch staged;
  staged.fields.reserve(host_batch.size());
  bool queued = false;
  try {
    for (const NamedTensor& field : host_batch) {
      const Tensor& source = field.tensor;
      KILN_CHECK(source.device().is_cpu() && source.is_contiguous(), Status::internal, "batch field '", field.name,
                 "' is not a contiguous CPU tensor");
      const size_t bytes = source.nbytes();
      auto storage = std::make_shared<Storage>(device_memory_->allocate(bytes, queue_->copy_stream()), bytes, device,
                                               device_memory_);
      if (bytes > 0) {
        queue_->copy_to_device(storage->data(), source.raw_data(), bytes);
        queued = true;
      }
      staged.fields.push_back({field.name, Tensor::from_storage(std::move(storage), source.shape(), source.dtype())});
    }
  } catch (...) {
    // Copies already queued still read the batch, which goes with this frame.
    if (queued) {
      const TransferQueue::Ticket ticket = queue_->record_copies();
      queue_->wait(ticket);
      queue_->release(ticket);
    }
    throw;
  }
  staged.copy = std::make_shared<InFlightCopy>(queue_, std::move(host_batch), queue_->record_copies());
  return staged;
}

NamedTensors DeviceStager::deliver(StagedBatch batch) {
  if (!batch.copy) return std::move(batch.fields);
  batch.copy->set_probe(queue_->compute_waits_for(batch.copy->ticket()));
  for (const NamedTensor& field : batch.fields)
    if (field.tensor.nbytes() > 0) device_memory_->record_stream(field.tensor.raw_data(), queue_->compute_stream());
  std::lock_guard lock(mutex_);
  delivered_.push_back(std::move(batch.copy));
  settle_locked();
  return std::move(batch.fields);
}

double DeviceStager::device_wait_seconds() {
  std::lock_guard lock(mutex_);
  settle_locked();
  return device_wait_seconds_;
}

void DeviceStager::settle_locked() {
  std::erase_if(delivered_, [&](const std::shared_ptr<InFlightCopy>& copy) {
    return copy->settle(&device_wait_seconds_);
  });
}

}  // namespace kiln::data
