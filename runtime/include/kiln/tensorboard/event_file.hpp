// TensorBoard event files, written by kiln alone (no TensorFlow, no
// protobuf library): the file TensorBoard's own writers make, in its record
// format, for scalars.
//
//   kiln::tensorboard::EventFileWriter events("runs/exp1");
//   const kiln::tensorboard::Scalar scalars[] = {{"train/loss", 0.42}, {"train/lr", 0.01}};
//   events.write_scalars(step, scalars);
//
// Each record is the payload's length (u64, little-endian), the masked
// CRC-32C of those 8 bytes, the payload (a serialized tensorflow.Event), and
// its masked CRC-32C. The first event holds file_version "brain.Event:2";
// each later one a wall time, a step and a Summary of simple_value scalars.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>

namespace kiln::tensorboard {

struct Scalar {
  std::string_view tag;
  double value = 0.0;  // stored as a 32-bit float, as simple_value is
};

class EventFileWriter {
 public:
  // Creates `directory` (with its parents) when missing and a new file in
  // it named as TensorBoard's writers name theirs,
  // events.out.tfevents.<seconds>.<host>.<pid>.<n>, holding the
  // file-version event. Throws Status::io naming the folder or the file
  // when either cannot be made.
  explicit EventFileWriter(const std::string& directory);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  const std::string& path() const { return path_; }

  // One event at `step`, stamped with the wall clock, holding `scalars`;
  // written and flushed before returning, so that a crash loses at most the
  // event being written. Throws Status::io naming the file on failure.
  void write_scalars(int64_t step, std::span<const Scalar> scalars);

 private:
  void write_record(const std::string& payload);

  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace kiln::tensorboard
