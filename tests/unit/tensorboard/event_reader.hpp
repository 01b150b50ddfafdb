// A reader of TensorBoard event files for the tests, written apart from
// kiln's writer: it checks every record's framing and checksums and decodes
// the Event fields kiln writes from the protobuf wire format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::test {

struct ReadScalar {
  std::string tag;
  float value = 0.0f;
};

struct ReadEvent {
  double wall_time = 0.0;
  int64_t step = 0;
  std::string file_version;  // empty unless the event is the file-version one
  std::vector<ReadScalar> scalars;
};

// Every event of the file at `path`, in order. Throws std::runtime_error
// saying what is wrong (a short record, a checksum that does not match, a
// field of an unexpected wire type) and at which byte.
std::vector<ReadEvent> read_event_file(const std::string& path);

// The file bytes' events, as read_event_file.
std::vector<ReadEvent> read_events(const std::string& bytes);

}  // namespace kiln::test
