// The thread budget: how many threads sluice may keep busy when the caller does not say.
#pragma once

namespace sluice {

// The number of cores this process may run on (at least 1).
int default_thread_count();

}  // namespace sluice
