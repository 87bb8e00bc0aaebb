// How sluice's commands name a class: by the data's class names where it has one, else by id.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::app {

// class_names[id], or `id` in decimal when it has no name (out of range, or no names at all).
inline std::string class_name(const std::vector<std::string>& class_names, int64_t id) {
  return id >= 0 && id < static_cast<int64_t>(class_names.size())
             ? class_names[static_cast<size_t>(id)]
             : std::to_string(id);
}

}  // namespace sluice::app
