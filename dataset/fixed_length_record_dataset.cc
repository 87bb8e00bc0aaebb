#include "sluice/dataset/fixed_length_record_dataset.h"

#include <limits>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/dataset/file_reader_source.h"
#include "sluice/formats/compression.h"
#include "sluice/formats/fixed_length_record_reader.h"

namespace sluice {
namespace {

class FixedLengthReader final : public FileReader {
 public:
  FixedLengthReader(const std::string& path, std::shared_ptr<const std::string> source,
                    const FixedLengthRecordFormat& format, Compression compression,
                    size_t buffer_size)
      : records_(path, format, compression, buffer_size), source_(std::move(source)) {}

  bool next(Item& out) override {
    Tensor record(DType::kString, Shape{});
    if (!records_.read(*record.data<std::string>())) return false;
    out.element = Element(std::move(record));
    out.element.set_origin(ElementOrigin(source_, records_.record_index() - 1));
    return true;
  }
  void save(StateWriter& writer) const override {
    writer.write_int("record", records_.record_index());
  }
  void restore(const StateReader& reader) override {
    records_.seek(reader.read_int("record", 0, std::numeric_limits<int64_t>::max()));
  }

 private:
  FixedLengthRecordReader records_;
  std::shared_ptr<const std::string> source_;
};

}  // namespace

Dataset FixedLengthRecordDataset(std::vector<std::string> filenames, int64_t record_bytes,
                                 int64_t header_bytes, int64_t footer_bytes, int64_t buffer_size,
                                 std::string compression_type, int64_t num_parallel_reads) {
  if (record_bytes <= 0) {
    throw InvalidArgument(
        str_cat("FixedLengthRecordDataset: record_bytes must be positive, got ", record_bytes));
  }
  if (header_bytes < 0 || footer_bytes < 0) {
    throw InvalidArgument(
        str_cat("FixedLengthRecordDataset: header_bytes and footer_bytes must be >= 0, got ",
                header_bytes, " and ", footer_bytes));
  }
  if (buffer_size <= 0) {
    throw InvalidArgument(
        str_cat("FixedLengthRecordDataset: buffer_size must be positive, got ", buffer_size));
  }
  const Compression compression = parse_compression(compression_type);
  if (compression == Compression::kAuto) {
    throw InvalidArgument(
        "FixedLengthRecordDataset: compression_type must be \"\", \"ZLIB\" or \"GZIP\", got "
        "\"AUTO\"");
  }
  const FixedLengthRecordFormat format{static_cast<uint64_t>(record_bytes),
                                       static_cast<uint64_t>(header_bytes),
                                       static_cast<uint64_t>(footer_bytes)};
  const auto buffer = static_cast<size_t>(buffer_size);
  return file_reader_dataset(
      "FixedLengthRecordDataset", "fixed_length_record", std::move(filenames),
      str_cat("record_bytes=", record_bytes, ", header_bytes=", header_bytes,
              ", footer_bytes=", footer_bytes, ", compression=", compression_name(compression)),
      [format, compression, buffer](const std::string& path,
                                    const std::shared_ptr<const std::string>& source) {
        return std::make_unique<FixedLengthReader>(path, source, format, compression, buffer);
      },
      num_parallel_reads);
}

}  // namespace sluice
