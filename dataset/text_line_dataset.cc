#include "sluice/dataset/text_line_dataset.h"

#include <limits>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/dataset/file_reader_source.h"
#include "sluice/formats/compression.h"
#include "sluice/formats/line_reader.h"

namespace sluice {
namespace {

class TextLineReader final : public FileReader {
 public:
  TextLineReader(const std::string& path, std::shared_ptr<const std::string> source,
                 Compression compression, size_t buffer_size)
      : lines_(path, compression, buffer_size), source_(std::move(source)) {}

  bool next(Item& out) override {
    Tensor line(DType::kString, Shape{});
    if (!lines_.read_line(*line.data<std::string>())) return false;
    out.element = Element(std::move(line));
    out.element.set_origin(ElementOrigin::line(source_, lines_.line_number()));
    return true;
  }
  void save(StateWriter& writer) const override {
    writer.write_int("offset", static_cast<int64_t>(lines_.offset()));
    writer.write_int("line", lines_.line_number());
  }
  void restore(const StateReader& reader) override {
    const int64_t offset = reader.read_int("offset", 0, std::numeric_limits<int64_t>::max());
    const int64_t line = reader.read_int("line", 0, offset);
    lines_.seek(static_cast<uint64_t>(offset), line);
  }

 private:
  LineReader lines_;
  std::shared_ptr<const std::string> source_;
};

}  // namespace

Dataset TextLineDataset(std::vector<std::string> filenames, std::string compression_type,
                        int64_t buffer_size, int64_t num_parallel_reads) {
  const Compression compression = parse_compression(compression_type);
  if (compression == Compression::kAuto) {
    throw InvalidArgument(
        "TextLineDataset: compression_type must be \"\", \"ZLIB\" or \"GZIP\", got \"AUTO\"");
  }
  if (buffer_size <= 0) {
    throw InvalidArgument(
        str_cat("TextLineDataset: buffer_size must be positive, got ", buffer_size));
  }
  const auto buffer = static_cast<size_t>(buffer_size);
  return file_reader_dataset(
      "TextLineDataset", "text_line", std::move(filenames),
      str_cat("compression=", compression_name(compression)),
      [compression, buffer](const std::string& path,
                            const std::shared_ptr<const std::string>& source) {
        return std::make_unique<TextLineReader>(path, source, compression, buffer);
      },
      num_parallel_reads);
}

}  // namespace sluice
