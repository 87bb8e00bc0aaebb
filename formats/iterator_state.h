// The iterator-state blob: a saved pipeline position as bytes (Iterator::save returns it,
// Iterator::restore takes it). It holds the signature of the plan it was saved from and the
// values each stage saved (graph/state.h says what they are).
//
// Format (version 1, little-endian). Every part is a record framed as TFRecord frames its
// records — u64 length · u32 masked CRC-32C of the length · payload · u32 masked CRC-32C of the
// payload — so that a flipped or missing byte is found at the record that holds it:
//   header record: "SLUICEIS" · u32 version
//   plan record:   'P' · u32 stages · per stage: u32 length · path · u32 length · description
//   value records: 'V' · u32 length · key · the value's bytes (the rest of the payload)
//   end record:    'E' · u64 number of value records
// Values are in key order, so one position always gives the same bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

inline constexpr uint32_t kIteratorStateVersion = 1;

// plan: (stage path, description) per stage; values: key → bytes.
std::string encode_iterator_state(const std::vector<std::pair<std::string, std::string>>& plan,
                                  const std::map<std::string, std::string>& values);

struct DecodedIteratorState {
  std::vector<std::pair<std::string, std::string>> plan;
  // key → (bytes, byte offset of the bytes in the blob); the views point into the blob.
  std::map<std::string, std::pair<std::string_view, uint64_t>, std::less<>> values;
};

// Checks every record and parses them. Throws DataLoss "iterator state: ... at byte offset N"
// naming the offset of the record at fault (bad magic, length or payload checksum, a record cut
// short, the end record missing, bytes after it, malformed payloads), and InvalidArgument for a
// blob of a newer version. Never reads outside `blob`; the result's views point into it.
DecodedIteratorState decode_iterator_state(std::string_view blob);

}  // namespace sluice
