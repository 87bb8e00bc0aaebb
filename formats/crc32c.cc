#include "formats/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#define SLUICE_CRC32C_X86 1
#endif

namespace sluice {
namespace {

// Reflected Castagnoli polynomial.
constexpr uint32_t kPoly = 0x82f63b78u;

using Table = std::array<std::array<uint32_t, 256>, 8>;

// Slicing-by-8 tables: kTables[k][b] is the CRC register after byte b followed by k zero bytes.
constexpr Table make_tables() {
  Table t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPoly : 0);
    t[0][b] = crc;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}
constexpr Table kTables = make_tables();

inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;  // The tables assume little-endian words, as on every platform sluice targets.
}
inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

namespace internal {

uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    const uint32_t lo = c ^ load32(p);
    const uint32_t hi = load32(p + 4);
    c = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
        kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
  }
  for (; n > 0; --n, ++p) c = (c >> 8) ^ kTables[0][(c ^ *p) & 0xff];
  return ~c;
}

#if SLUICE_CRC32C_X86

namespace {

// Three streams hide the 3-cycle latency of the crc32 instruction. Their registers are combined by
// "shifting" a register over a block of zero bytes, a linear map over GF(2) that we tabulate.
constexpr size_t kLongBlock = 8192;
constexpr size_t kShortBlock = 256;

// A 32x32 GF(2) matrix as the images of the 32 unit vectors.
using Gf2Matrix = std::array<uint32_t, 32>;

uint32_t gf2_times(const Gf2Matrix& m, uint32_t v) {
  uint32_t sum = 0;
  for (int i = 0; v != 0; ++i, v >>= 1) {
    if (v & 1) sum ^= m[i];
  }
  return sum;
}

Gf2Matrix gf2_compose(const Gf2Matrix& a, const Gf2Matrix& b) {  // a after b
  Gf2Matrix c{};
  for (int i = 0; i < 32; ++i) c[i] = gf2_times(a, b[i]);
  return c;
}

// The map "feed `bytes` zero bytes to the register", tabulated by byte position.
struct ShiftTable {
  std::array<std::array<uint32_t, 256>, 4> t;

  explicit ShiftTable(size_t bytes) {
    Gf2Matrix bit{};  // One zero bit.
    bit[0] = kPoly;
    for (int i = 1; i < 32; ++i) bit[i] = 1u << (i - 1);
    Gf2Matrix byte = gf2_compose(bit, bit);
    byte = gf2_compose(byte, byte);
    byte = gf2_compose(byte, byte);
    Gf2Matrix op{};
    for (int i = 0; i < 32; ++i) op[i] = 1u << i;
    for (Gf2Matrix power = byte; bytes != 0; bytes >>= 1, power = gf2_compose(power, power)) {
      if (bytes & 1) op = gf2_compose(power, op);
    }
    for (int k = 0; k < 4; ++k) {
      for (uint32_t b = 0; b < 256; ++b) t[k][b] = gf2_times(op, b << (8 * k));
    }
  }

  uint32_t shift(uint32_t c) const {
    return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
  }
};

const ShiftTable& long_shift() {
  static const ShiftTable table(kLongBlock);
  return table;
}
const ShiftTable& short_shift() {
  static const ShiftTable table(kShortBlock);
  return table;
}

// Consumes as many 3*block runs as fit, each as three interleaved streams.
__attribute__((target("sse4.2"))) inline uint64_t crc_triples(uint64_t c0, const uint8_t*& p,
                                                              size_t& n, size_t block,
                                                              const ShiftTable& shift) {
  while (n >= 3 * block) {
    uint64_t c1 = 0;
    uint64_t c2 = 0;
    const uint8_t* end = p + block;
    do {
      c0 = _mm_crc32_u64(c0, load64(p));
      c1 = _mm_crc32_u64(c1, load64(p + block));
      c2 = _mm_crc32_u64(c2, load64(p + 2 * block));
      p += 8;
    } while (p < end);
    c0 = shift.shift(static_cast<uint32_t>(c0)) ^ c1;
    c0 = shift.shift(static_cast<uint32_t>(c0)) ^ c2;
    p += 2 * block;
    n -= 3 * block;
  }
  return c0;
}

}  // namespace

bool crc32c_hardware_available() {
  static const bool available = __builtin_cpu_supports("sse4.2");
  return available;
}

__attribute__((target("sse4.2"))) uint32_t crc32c_extend_hardware(uint32_t crc, const void* data,
                                                                  size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t c = static_cast<uint32_t>(~crc);
  // Aligned 8-byte loads are cheaper on older cores.
  for (; n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0; --n, ++p) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p);
  }
  if (n >= 3 * kLongBlock) c = crc_triples(c, p, n, kLongBlock, long_shift());
  if (n >= 3 * kShortBlock) c = crc_triples(c, p, n, kShortBlock, short_shift());
  for (; n >= 8; n -= 8, p += 8) c = _mm_crc32_u64(c, load64(p));
  for (; n > 0; --n, ++p) c = _mm_crc32_u8(static_cast<uint32_t>(c), *p);
  return ~static_cast<uint32_t>(c);
}

#else  // !SLUICE_CRC32C_X86

bool crc32c_hardware_available() { return false; }
uint32_t crc32c_extend_hardware(uint32_t crc, const void* data, size_t n) {
  return crc32c_extend_portable(crc, data, n);
}

#endif

}  // namespace internal

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n) {
  if (internal::crc32c_hardware_available()) {
    return internal::crc32c_extend_hardware(crc, data, n);
  }
  return internal::crc32c_extend_portable(crc, data, n);
}

}  // namespace sluice
