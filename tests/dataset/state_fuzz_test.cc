// The iterator-state fuzz target (tests/fuzz/state_fuzzer.cc) as a regression test: its seeds, and
// each with bytes changed and cut off at spread-out places, end in a sluice error or a running
// iterator, never a crash or another exception (which aborts, as a fuzzing finding does).
#include <gtest/gtest.h>

#include <string>

#include "tests/fuzz/state_fuzzing.h"

namespace sluice {
namespace {

void run(const std::string& input) {
  fuzzing::fuzz_iterator_state(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

TEST(StateFuzzRegression, SeedsAndTheirChangesEndInAnErrorOrARunningIterator) {
  const auto seeds = fuzzing::state_fuzz_seeds();
  ASSERT_EQ(seeds.size(), 2u * 4u * fuzzing::kStatePipelines);
  constexpr size_t kPlaces = 16;
  for (const auto& [name, input] : seeds) {
    SCOPED_TRACE(name);
    run(input);
    for (size_t p = 1; p <= kPlaces; ++p) {
      const size_t at = 1 + (input.size() - 1) * p / (kPlaces + 1);
      std::string changed = input;
      changed[at] = static_cast<char>(changed[at] ^ (p % 2 == 0 ? 0x01 : 0xff));
      run(changed);
      run(input.substr(0, at));
    }
  }
}

}  // namespace
}  // namespace sluice
