// Reading a whole file into memory in as few read() calls as its size allows: how image
// pipelines get each image's bytes. <fstream>'s per-byte stream iterators cost as much as
// decoding a small JPEG; this costs one fstat and one read.
#pragma once

#include <string>

namespace sluice {

// The file's bytes. Throws NotFound naming `path` when it cannot be opened, InvalidArgument for
// a directory, DataLoss naming it for a read error.
std::string read_file_bytes(const std::string& path);

}  // namespace sluice
