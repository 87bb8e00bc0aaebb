// ElementRange: the elements [begin, end) of a tensor's flat values, such as the share of a
// parameter that one worker updates.
#pragma once

#include <cstdint>

namespace sluice {

struct ElementRange {
  int64_t begin = 0;
  int64_t end = 0;

  int64_t size() const { return end - begin; }
};

}  // namespace sluice
