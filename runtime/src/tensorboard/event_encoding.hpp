// The bytes of an event file: the protobuf encoding of the tensorflow.Event
// messages kiln writes (only the fields it uses, by their numbers in
// TensorFlow's event.proto and summary.proto) and the record framing.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kiln/tensorboard/event_file.hpp"

namespace kiln::tensorboard {

// Event{wall_time, file_version}: the first record of every event file.
std::string encode_file_version_event(double wall_time, std::string_view version);

// Event{wall_time, step, summary: Summary{value: [{tag, simple_value}...]}}.
std::string encode_scalars_event(double wall_time, int64_t step, std::span<const Scalar> scalars);

// The record of `payload`: its length (u64, little-endian), the masked
// CRC-32C of those 8 bytes, the payload, the masked CRC-32C of the payload.
std::string frame_record(const std::string& payload);

}  // namespace kiln::tensorboard
