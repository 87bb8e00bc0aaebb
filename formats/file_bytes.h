// Reading a whole file into memory in as few read() calls as its size allows: how image
// pipelines get each image's bytes. <fstream>'s per-byte stream iterators cost as much as
// decoding a small JPEG; this costs one fstat and one read.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

// The file's bytes. Throws NotFound naming `path` when it cannot be opened, InvalidArgument for
// a directory, DataLoss naming it for a read error.
std::string read_file_bytes(const std::string& path);

// The same bytes read into `buffer`, returned as a view of it (valid until `buffer` changes).
// The buffer only ever grows, to the largest file read plus one byte, and is not cleared: a
// thread reading file after file with one buffer allocates and zero-fills it once, not per file.
// Throws as above.
std::string_view read_file_bytes(const std::string& path, std::string& buffer);

}  // namespace sluice
