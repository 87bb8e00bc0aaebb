#include "core/byte_reader.h"

#include <algorithm>
#include <limits>

#include "core/errors.h"
#include "core/strings.h"

namespace sluice {

void ByteReader::read(void* dst, size_t n) {
  if (n > remaining()) {
    fail(str_cat("truncated (", n, " bytes wanted, ", remaining(), " left)"));
  }
  const size_t got = n == 0 ? 0 : read_some(dst, n);
  consumed_ += got;
  if (got != n) fail("truncated");
}

std::string ByteReader::get_string() {
  const auto size = get<uint32_t>();
  if (size > remaining()) {
    fail(str_cat("a string of ", size, " bytes passes the end (", remaining(), " bytes left)"));
  }
  std::string value(size, '\0');
  read(value.data(), size);
  return value;
}

void ByteReader::fail(std::string_view problem) const { fail_at(offset(), problem); }

void ByteReader::fail_at(uint64_t offset, std::string_view problem) const {
  throw DataLoss(str_cat(what_, ": ", problem, " at byte offset ", offset));
}

size_t StringByteReader::read_some(void* dst, size_t n) {
  const size_t k = std::min(n, bytes_.size() - pos_);
  std::memcpy(dst, bytes_.data() + pos_, k);
  pos_ += k;
  return k;
}

size_t StreamByteReader::read_some(void* dst, size_t n) {
  in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
  const auto got = static_cast<size_t>(std::max<std::streamsize>(in_.gcount(), 0));
  pos_ += got;
  return got;
}

void put_string(std::string& out, std::string_view value) {
  if (value.size() > std::numeric_limits<uint32_t>::max()) {
    throw InvalidArgument(str_cat("a string of ", value.size(), " bytes is too long to encode"));
  }
  put_bytes<uint32_t>(out, static_cast<uint32_t>(value.size()));
  out.append(value);
}

}  // namespace sluice
