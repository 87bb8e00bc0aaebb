// String helpers used to build error messages and debug output without iostream boilerplate at
// every call site, and to take paths apart.
#pragma once

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// Concatenates the streamable arguments: str_cat("record ", 3, " at ", offset).
template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return std::move(out).str();
}

// Joins the items with the separator, each written with operator<<.
template <class Range>
std::string str_join(const Range& items, std::string_view separator) {
  std::ostringstream out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out << separator;
    out << item;
    first = false;
  }
  return std::move(out).str();
}

// The non-empty parts of a '/'-separated path, views into `path`: "/a//b/" gives {"a", "b"}.
inline std::vector<std::string_view> path_components(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

}  // namespace sluice
