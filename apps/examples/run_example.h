// How every example program runs: the time zone is pinned (apps/time_zone.h: zips read faster),
// its body runs, and an error becomes "error: <message>" on stderr and exit status 1 (sluice's
// errors name the file, element or flag at fault).
#pragma once

#include <cstdio>
#include <exception>

#include "apps/time_zone.h"

namespace sluice::examples {

template <class Body>
int run_example(Body&& body) {
  app::pin_time_zone();
  try {
    body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace sluice::examples
