// Fuzzes the iterator-state reader and every stage's restore (tests/fuzz/state_fuzzing.h says
// how the input is read).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/state_fuzzing.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzzing::fuzz_iterator_state(data, size);
  return 0;
}
