#include "kiln/util/crc32c.hpp"

#include <array>

namespace kiln {
namespace {

// Reflected form of the Castagnoli polynomial 0x1EDC6F41.
constexpr uint32_t kPolynomial = 0x82F63B78u;

// Byte-at-a-time table; event files are small, so a faster (sliced or
// SSE4.2) variant would gain nothing measurable.
constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kPolynomial : 0u);
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = make_table();

// TensorFlow's mask constant (crc32c.h): added after the rotation.
constexpr uint32_t kMaskDelta = 0xA282EAD8u;

}  // namespace

uint32_t crc32c(const void* data, size_t size, uint32_t crc) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = kTable[(crc ^ bytes[i]) & 0xFFu] ^ (crc >> 8);
  return ~crc;
}

uint32_t masked_crc32c(const void* data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}

}  // namespace kiln
