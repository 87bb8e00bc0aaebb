#include "dataset/archive_dataset.h"

#include <memory>
#include <optional>

#include "core/strings.h"
#include "formats/archive.h"
#include "formats/glob.h"
#include "graph/stage.h"
#include "graph/stages/sources.h"

namespace sluice {
namespace {

class ArchiveSource final : public ElementSource {
 public:
  ArchiveSource(std::string path, std::string glob, int64_t max_bytes)
      : path_(std::move(path)),
        glob_(std::move(glob)),
        max_bytes_(max_bytes),
        names_(std::make_shared<const Element::Names>(Element::Names{"path", "bytes"})) {}

  bool next(Chunk& out, size_t max) override {
    const size_t start = out.size();
    try {
      if (!reader_) reader_.emplace(path_);
      ArchiveEntry entry;
      while (!done_ && out.size() - start < max) {
        if (!reader_->next(entry)) {
          done_ = true;
          break;
        }
        if (entry.type != ArchiveEntryType::kFile) continue;
        if (!glob_.empty() && !glob_match_path(glob_, entry.path)) continue;
        std::vector<Tensor> components{Tensor::scalar(entry.path),
                                       Tensor::scalar(reader_->read_data(max_bytes_))};
        Element element(std::move(components), names_);
        element.set_origin(
            ElementOrigin(std::make_shared<const std::string>(str_cat(path_, "/", entry.path))));
        out.push_back(Item{std::move(element), nullptr});
      }
    } catch (...) {
      done_ = true;
      out.push_back(Item::failure(std::current_exception()));
    }
    return out.size() > start;
  }

 private:
  std::string path_;
  std::string glob_;
  int64_t max_bytes_;
  std::shared_ptr<const Element::Names> names_;
  std::optional<ArchiveReader> reader_;
  bool done_ = false;
};

}  // namespace

Dataset archive_dataset(const std::string& archive_path, const std::string& member_glob,
                        int64_t max_member_bytes) {
  { ArchiveReader check(archive_path); }  // Errors in the archive's name now, not at next().
  return Dataset::from_plan(
      make_source("archive", kUnknownCardinality, [archive_path, member_glob, max_member_bytes] {
        return std::make_unique<ArchiveSource>(archive_path, member_glob, max_member_bytes);
      }));
}

}  // namespace sluice
