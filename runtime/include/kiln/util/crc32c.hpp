// CRC-32C (Castagnoli, the polynomial iSCSI and ext4 use), as TensorBoard's
// record format checks its lengths and payloads with it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {

// The CRC-32C of `size` bytes, continuing from `crc` (0 to start): the
// standard check value of "123456789" is 0xE3069283.
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);

// The checksum as TensorFlow's record files store it: rotated right by 15
// bits and offset, so that a CRC of data that embeds CRCs stays strong.
uint32_t masked_crc32c(const void* data, size_t size);

}  // namespace kiln
