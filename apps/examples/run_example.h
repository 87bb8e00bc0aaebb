// How every example program runs: the time zone is pinned (apps/time_zone.h: zips read faster),
// stdout is line-buffered so progress shows as it happens even through a pipe or into a log
// file, its body runs, and an error becomes "error: <message>" on stderr and exit status 1
// (sluice's errors name the file, element or flag at fault).
#pragma once

#include <cstdio>
#include <exception>

#include "apps/time_zone.h"

namespace sluice::examples {

template <class Body>
int run_example(Body&& body) {
  app::pin_time_zone();
  // A pipe or a file would otherwise be block-buffered: nothing would show for minutes.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    body();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace sluice::examples
