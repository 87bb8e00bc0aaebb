// Glob patterns over the file system, as tf.io.gfile.glob plus `**`: `*`, `?`, `[...]` (with
// `[!...]` / `[^...]` negation and `a-z` ranges) match within one path component, `\` escapes the
// next character, and a `**` component matches any number of directory levels (zero included).
//
// Thread safety: the functions are pure apart from reading the file system.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// Whether `name` (one path component, no '/') matches `pattern` (one component, no `**`).
// Every character counts, a leading '.' included, as in TensorFlow.
bool glob_match_component(std::string_view pattern, std::string_view name);

// Whether a '/'-separated `path` (e.g. an archive member) matches `pattern` component by
// component, a `**` component matching any number of components (zero included).
bool glob_match_path(std::string_view pattern, std::string_view path);

// Whether the pattern has any of the special characters * ? [ (or a `\` escape).
bool has_glob_chars(std::string_view pattern);

// The paths matching `pattern`, sorted, spelled with the pattern's own prefix (a relative pattern
// gives relative paths). A path without special characters matches itself when it exists. Matches
// may be files or directories; `**` descends into real directories only, never through symbolic
// links (so a link cycle cannot make it loop), while a named or wildcard component follows them.
// Directories that cannot be read contribute nothing. A pattern matching nothing gives {}.
std::vector<std::string> glob(std::string_view pattern);

}  // namespace sluice
