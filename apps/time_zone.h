// The process's time zone named once, so that glibc stops re-reading it (see formats/archive.h).
#pragma once

#include <cstdlib>

namespace sluice::app {

// With TZ unset, glibc's mktime stats /etc/localtime on every call, and libarchive calls mktime
// for every zip header: a shuffled pass over a zip of small images spent a third of its CPU time
// there. TZ=:/etc/localtime is the zone glibc uses when TZ is unset, so local times do not change;
// a TZ the user set is kept. Call before any thread starts: setenv is not safe beside getenv.
inline void pin_time_zone() { setenv("TZ", ":/etc/localtime", /*overwrite=*/0); }

}  // namespace sluice::app
