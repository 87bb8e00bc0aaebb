// The compression of a TFRecord file, as TensorFlow's TFRecordOptions: none, ZLIB (RFC 1950) or
// GZIP (RFC 1952) around the whole record stream. kAuto means "GZIP if the file starts with the
// gzip magic bytes, else none" and is resolved when a file is opened.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

enum class Compression { kNone, kZlib, kGzip, kAuto };

// "" / "NONE" → kNone, "ZLIB" → kZlib, "GZIP" → kGzip, "AUTO" → kAuto (any letter case).
// Throws InvalidArgument for anything else (TensorFlow only logs and reads uncompressed; silently
// reading compressed bytes as records helps no one).
Compression parse_compression(std::string_view name);

// "", "ZLIB", "GZIP" or "AUTO": the name parse_compression accepts.
std::string_view compression_name(Compression compression);

// kGzip when the file starts with 1f 8b, else kNone (a ZLIB header is not distinctive enough to
// tell from a record length). Throws NotFound when the file cannot be opened.
Compression detect_compression(const std::string& path);

}  // namespace sluice
