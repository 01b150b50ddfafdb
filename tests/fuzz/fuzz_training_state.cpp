// libFuzzer target: arbitrary bytes as a training state file's image. They
// go through the safetensors header checks, then kiln's training-state
// manifest is read from the metadata as loading a state reads it: the
// format, the plugins that made it, the trainer's position, the loss scale,
// the random stream and every optimizer group's learning rates. Each value
// either reads as its type promises (a count >= 0, a finite number, a
// positive scale) or is refused with Status::io naming the file and the
// key; anything else (a crash, a sanitizer report, another exception, a
// value outside its promise) is a finding.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "checkpoint/state_metadata.hpp"
#include "header_length.hpp"
#include "kiln/error.hpp"

namespace {

using namespace kiln;
namespace keys = abi::state_keys;

constexpr const char* kPath = "fuzz.state";

void require(bool invariant) {
  if (!invariant) std::abort();
}

// Each read of one key: its value keeps its promise, or the refusal is an
// io error that names the file.
template <class Read>
void read_or_refuse(Read read) {
  try {
    read();
  } catch (const Error& e) {
    require(e.status() == Status::io);
    require(std::string_view(e.what()).find(kPath) != std::string_view::npos);
  }
}

void read_manifest(const abi::StateMetadata& meta) {
  read_or_refuse([&] { (void)meta.text(keys::kFormat); });
  read_or_refuse([&] { (void)meta.text(keys::kVersion); });
  for (std::string_view key : {keys::kStep, keys::kEpoch, keys::kEpochStarted, keys::kEpochStep, keys::kEpochBatches,
                               keys::kEpochSamples, keys::kUpdates, keys::kLossScaleCleanSteps,
                               keys::kBatchesPerEpoch})
    read_or_refuse([&] { require(meta.count(key) >= 0); });
  for (std::string_view key : {keys::kRngSeed, keys::kRngOffset}) read_or_refuse([&] { (void)meta.u64(key); });
  read_or_refuse([&] {
    const double scale = meta.positive(keys::kLossScale);
    require(std::isfinite(scale) && scale > 0);
  });
  // The groups are read until one is missing or malformed, as loading does.
  read_or_refuse([&] {
    const int64_t groups = meta.count(keys::kGroups);
    for (int64_t g = 0; g < groups; ++g) {
      require(std::isfinite(meta.number(keys::group_key(size_t(g), "lr"))));
      require(std::isfinite(meta.number(keys::group_key(size_t(g), "base_lr"))));
    }
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const uint64_t length = checkpoint::checked_header_length({data, std::min<size_t>(size, 8)}, size);
    const std::string_view json(reinterpret_cast<const char*>(data) + 8, size_t(length));
    const checkpoint::Header header = checkpoint::parse_header(json, size);
    read_manifest(abi::StateMetadata(header.metadata, kPath));
  } catch (const Error& e) {
    require(e.status() == Status::io);
  }
  return 0;
}
