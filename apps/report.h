// The last line every sluice command prints: `key=value` pairs for scripts, or with --json one
// JSON object.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace sluice::app {

class Report {
 public:
  void add(std::string key, std::string value) {
    fields_.emplace_back(std::move(key), std::move(value));
  }
  void add(std::string key, double value, int decimals = 0) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.*f", decimals, value);
    add(std::move(key), std::string(text));
  }
  void add(std::string key, long long value) { add(std::move(key), std::to_string(value)); }

  void print(bool json) const {
    std::string line = json ? "{" : "";
    for (size_t i = 0; i < fields_.size(); ++i) {
      const auto& [key, value] = fields_[i];
      if (json) {
        line += (i ? ", \"" : "\"") + key + "\": " + (is_number(value) ? value : quote(value));
      } else {
        line += (i ? " " : "") + key + "=" + value;
      }
    }
    if (json) line += "}";
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

 private:
  static bool is_number(const std::string& s) {
    if (s.empty()) return false;
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size();
  }
  static std::string quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  }

  std::vector<std::pair<std::string, std::string>> fields_;
};

}  // namespace sluice::app
