#include "sluice/dataset/tfrecord_dataset.h"

#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/dataset/file_reader_source.h"
#include "sluice/dataset/saved_file.h"
#include "sluice/formats/compression.h"
#include "sluice/formats/tfrecord_reader.h"
#include "sluice/graph/stage.h"
#include "sluice/graph/stages/sources.h"

namespace sluice {
namespace {

// Reads the files one after the other; each record's origin is its file and index there. A file
// that fails to open or read contributes its error as one item and the source moves on, as
// TensorFlow's TFRecordDataset iterator does ("so that it works with ignore_errors").
class TFRecordSource final : public ElementSource {
 public:
  TFRecordSource(std::shared_ptr<const std::vector<std::string>> files,
                 TFRecordReaderOptions options)
      : files_(std::move(files)), options_(options) {}

  bool next(Chunk& out, size_t max) override {
    const size_t start = out.size();
    if (pending_) {
      out.push_back(Item{std::move(*pending_), nullptr});
      pending_.reset();
    }
    while (out.size() - start < max) {
      if (!reader_) {
        if (next_file_ >= files_->size()) break;
        const std::string& path = (*files_)[next_file_++];
        try {
          reader_.emplace(path, options_);
          source_ = std::make_shared<const std::string>(path);
        } catch (...) {
          out.push_back(Item::failure(std::current_exception()));
          return true;  // Deliver the error at its place; the next call opens the next file.
        }
      }
      Tensor record(DType::kString, Shape{});
      try {
        // Straight into the tensor's string: one copy of the payload.
        if (!reader_->read(*record.data<std::string>())) {
          reader_.reset();
          continue;
        }
      } catch (...) {
        reader_.reset();
        out.push_back(Item::failure(std::current_exception()));
        return true;
      }
      Element element{std::move(record)};
      element.set_origin(ElementOrigin(source_, reader_->record_index() - 1));
      out.push_back(Item{std::move(element), nullptr});
    }
    return out.size() > start;
  }

  // The file being read, the byte offset and index of its next record, and its size then.
  void save(StateWriter& writer) const override {
    writer.write_int("next_file", static_cast<int64_t>(next_file_));
    writer.write_int("reading", reader_ ? 1 : 0);
    if (!reader_) return;
    // A record restored but not handed out yet is the next one.
    const int64_t pending = pending_ ? 1 : 0;
    writer.write_int("offset", static_cast<int64_t>(pending ? pending_offset_ : reader_->offset()));
    writer.write_int("record", reader_->record_index() - pending);
    save_file_size(writer, "file_size", reader_->path());
  }

  // Reopens the file at the saved offset and reads the record there, which must parse: a file
  // that shrank or was rewritten since is refused rather than read from the middle of a record.
  void restore(const StateReader& reader) override {
    next_file_ =
        static_cast<size_t>(reader.read_int("next_file", 0, static_cast<int64_t>(files_->size())));
    if (!reader.read_bool("reading")) return;
    if (next_file_ == 0) reader.fail("reading", "is set before any file was opened");
    const std::string& path = (*files_)[next_file_ - 1];
    const auto offset =
        static_cast<uint64_t>(reader.read_int("offset", 0, std::numeric_limits<int64_t>::max()));
    const int64_t record = reader.read_int("record", 0, std::numeric_limits<int64_t>::max());
    check_file_size(reader, "file_size", path, "TFRecordDataset", /*may_grow=*/true);
    try {
      reader_.emplace(path, options_);
      source_ = std::make_shared<const std::string>(path);
      reader_->seek(offset, record);
      Tensor next(DType::kString, Shape{});
      if (reader_->read(*next.data<std::string>())) {
        pending_.emplace(Element(std::move(next)));
        pending_->set_origin(ElementOrigin(source_, record));
      }
      pending_offset_ = offset;
    } catch (const DataLoss& e) {
      throw FailedPrecondition(str_cat("TFRecordDataset: ", path,
                                       " changed since the iterator state was saved: the record "
                                       "saved at byte offset ",
                                       offset, " does not parse (", e.what(), ")"));
    }
  }

 private:
  std::shared_ptr<const std::vector<std::string>> files_;
  TFRecordReaderOptions options_;
  size_t next_file_ = 0;
  std::optional<TFRecordReader> reader_;
  std::shared_ptr<const std::string> source_;  // The open file's name, the records' origin.
  std::optional<Element> pending_;             // The record a restore read to check the file.
  uint64_t pending_offset_ = 0;
};

Dataset files_dataset(std::shared_ptr<const std::vector<std::string>> files,
                      TFRecordReaderOptions options) {
  return files_source("tfrecord", std::move(files),
                      str_cat("compression=", compression_name(options.compression)),
                      [options](std::shared_ptr<const std::vector<std::string>> some) {
                        return std::make_unique<TFRecordSource>(std::move(some), options);
                      });
}

}  // namespace

Dataset TFRecordDataset(std::vector<std::string> filenames, std::string compression,
                        int64_t buffer_size, int64_t num_parallel_reads) {
  TFRecordReaderOptions options;
  options.compression = parse_compression(compression);
  if (buffer_size <= 0) {
    throw InvalidArgument(
        str_cat("TFRecordDataset: buffer_size must be positive, got ", buffer_size));
  }
  options.buffer_size = static_cast<size_t>(buffer_size);
  if (num_parallel_reads < 0 && num_parallel_reads != kAutotune) {
    throw InvalidArgument(
        str_cat("TFRecordDataset: num_parallel_reads must be >= 0 or kAutotune, "
                "got ",
                num_parallel_reads));
  }
  for (const std::string& f : filenames) {
    std::error_code ec;
    if (!std::filesystem::exists(f, ec)) {
      throw NotFound(str_cat("TFRecordDataset: ", f, ": No such file or directory"));
    }
  }

  return read_files(std::move(filenames), num_parallel_reads,
                    [options](std::shared_ptr<const std::vector<std::string>> files) {
                      return files_dataset(std::move(files), options);
                    });
}

}  // namespace sluice
