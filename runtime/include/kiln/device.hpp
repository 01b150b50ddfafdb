// Where a tensor lives. Every tensor carries one from the start, and the
// allocator and the kernel table are chosen by it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

// Values are the C API's kiln_device_type values.
enum class DeviceType : uint8_t { cpu = 0, cuda = 1 };
inline constexpr int kNumDeviceTypes = 2;

struct Device {
  DeviceType type = DeviceType::cpu;
  int index = 0;

  static Device cpu() { return {DeviceType::cpu, 0}; }
  static Device cuda(int i) { return {DeviceType::cuda, i}; }
  bool is_cpu() const { return type == DeviceType::cpu; }
  bool is_cuda() const { return type == DeviceType::cuda; }
  friend bool operator==(const Device&, const Device&) = default;
};

std::string to_string(const Device& d);  // "cpu", "cuda:0"
// Parses "cpu", "cuda" (index 0) and "cuda:N"; returns false otherwise.
bool parse_device(std::string_view text, Device* out);

}  // namespace kiln
