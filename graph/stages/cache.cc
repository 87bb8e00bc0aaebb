#include "graph/stages/cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "core/strings.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'S', 'L', 'C', 'A', 'C', 'H', 'E', '1'};

// --- The cache file: the magic, then each element as its components (dtype, rank, name, dims,
// --- data; strings as length-prefixed bytes).

template <class T>
void put(std::ostream& out, T value) {
  out.write(reinterpret_cast<const char*>(&value), sizeof(value));
}

void write_element(std::ostream& out, const Element& element) {
  put<uint32_t>(out, static_cast<uint32_t>(element.size()));
  for (size_t c = 0; c < element.size(); ++c) {
    const Tensor& t = element[c];
    const std::string_view name = element.name(c);
    put<uint8_t>(out, static_cast<uint8_t>(t.dtype()));
    put<uint8_t>(out, static_cast<uint8_t>(t.rank()));
    put<uint16_t>(out, static_cast<uint16_t>(name.size()));
    out.write(name.data(), static_cast<std::streamsize>(name.size()));
    for (int64_t d : t.shape().dims()) put<int64_t>(out, d);
    if (t.dtype() == DType::kString) {
      for (const std::string& s : t.values<std::string>()) {
        put<uint64_t>(out, s.size());
        out.write(s.data(), static_cast<std::streamsize>(s.size()));
      }
    } else {
      out.write(static_cast<const char*>(t.raw_data()), static_cast<std::streamsize>(t.byte_size()));
    }
  }
}

class CacheReader {
 public:
  explicit CacheReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw NotFound(str_cat("cannot open cache file '", path, "'"));
    char magic[8];
    read_bytes(magic, sizeof(magic));
    if (std::memcmp(magic, kMagic, sizeof(magic)) != 0) {
      throw DataLoss(str_cat("'", path, "' is not a sluice cache file (bad magic at offset 0)"));
    }
  }

  // The next element, or false at a clean end of file.
  bool next(Element& element) {
    if (in_.peek() == std::char_traits<char>::eof()) return false;
    const auto components = get<uint32_t>();
    std::vector<Tensor> tensors;
    auto names = std::make_shared<Element::Names>();
    bool named = false;
    for (uint32_t c = 0; c < components; ++c) {
      const auto dtype = get<uint8_t>();
      const auto rank = get<uint8_t>();
      if (dtype > static_cast<uint8_t>(DType::kString) || rank > Shape::kMaxRank) corrupt();
      std::string name(get<uint16_t>(), '\0');
      read_bytes(name.data(), name.size());
      named = named || !name.empty();
      names->push_back(std::move(name));
      std::vector<int64_t> dims(rank);
      for (auto& d : dims) {
        d = get<int64_t>();
        if (d < 0 || d > (int64_t{1} << 40)) corrupt();
      }
      Tensor t(static_cast<DType>(dtype), Shape(std::span<const int64_t>(dims)));
      if (t.dtype() == DType::kString) {
        for (std::string& s : t.values<std::string>()) {
          const auto size = get<uint64_t>();
          if (size > (uint64_t{1} << 40)) corrupt();
          s.resize(size);
          read_bytes(s.data(), size);
        }
      } else {
        read_bytes(static_cast<char*>(t.raw_data()), t.byte_size());
      }
      tensors.push_back(std::move(t));
    }
    element = Element(std::move(tensors), named ? std::move(names) : nullptr);
    return true;
  }

 private:
  template <class T>
  T get() {
    T value;
    read_bytes(reinterpret_cast<char*>(&value), sizeof(value));
    return value;
  }
  void read_bytes(char* data, size_t size) {
    const auto offset = static_cast<int64_t>(in_.tellg());
    in_.read(data, static_cast<std::streamsize>(size));
    if (static_cast<size_t>(in_.gcount()) != size) {
      throw DataLoss(str_cat("cache file '", path_, "' is truncated at offset ", offset));
    }
  }
  [[noreturn]] void corrupt() {
    throw DataLoss(str_cat("cache file '", path_, "' is corrupt at offset ",
                           static_cast<int64_t>(in_.tellg())));
  }

  std::string path_;
  std::ifstream in_;
};

// Where a pass's elements go: memory, or a temporary file renamed into place at the end.
struct MemoryCache {
  std::mutex mutex;
  std::shared_ptr<const std::vector<Element>> elements;  // Set once a pass completed.
};

class CacheNode final : public PlanNodeOf<CacheNode> {
 public:
  CacheNode(PlanPtr input, std::string filename)
      : PlanNodeOf("cache", {std::move(input)}), filename_(std::move(filename)) {}

  int64_t cardinality() const override { return input()->cardinality(); }

  std::unique_ptr<StageIterator> make_iterator(ExecContext& ctx,
                                               const StagePath& path) const override {
    StageStats* stats = ctx.stats_for(path, name(), false);
    if (filename_.empty()) {
      std::shared_ptr<const std::vector<Element>> done;
      {
        std::lock_guard<std::mutex> lock(memory_->mutex);
        done = memory_->elements;
      }
      if (done) return std::make_unique<ReplayMemory>(stats, std::move(done));
      return std::make_unique<Record>(stats, lower_input(ctx, *this, path, stats), memory_, "");
    }
    const std::string data = filename_ + ".sluice-cache";
    if (fs::exists(data)) return std::make_unique<ReplayFile>(stats, data);
    return std::make_unique<Record>(stats, lower_input(ctx, *this, path, stats), nullptr,
                                    filename_);
  }

 private:
  class ReplayMemory final : public StageIterator {
   public:
    ReplayMemory(StageStats* stats, std::shared_ptr<const std::vector<Element>> elements)
        : StageIterator(stats), elements_(std::move(elements)) {}

   protected:
    bool next_internal(Chunk& out, size_t max) override {
      if (index_ == elements_->size()) return false;
      const size_t end = std::min(elements_->size(), index_ + max);
      for (; index_ < end; ++index_) out.push_back(Item{(*elements_)[index_], nullptr});
      return true;
    }

   private:
    std::shared_ptr<const std::vector<Element>> elements_;
    size_t index_ = 0;
  };

  class ReplayFile final : public StageIterator {
   public:
    ReplayFile(StageStats* stats, const std::string& path) : StageIterator(stats), path_(path) {}

   protected:
    bool next_internal(Chunk& out, size_t max) override {
      if (!reader_) reader_.emplace(path_);
      const size_t before = out.size();
      Element element;
      while (out.size() - before < max && reader_->next(element)) {
        out.push_back(Item{std::move(element), nullptr});
      }
      return out.size() > before;
    }

   private:
    std::string path_;
    std::optional<CacheReader> reader_;
  };

  // The first pass: passes the input on and records it.
  class Record final : public StageIterator {
   public:
    Record(StageStats* stats, StageInput input, std::shared_ptr<MemoryCache> memory,
           std::string prefix)
        : StageIterator(stats), input_(std::move(input)), memory_(std::move(memory)),
          prefix_(std::move(prefix)) {
      if (!prefix_.empty()) open_file();
    }

    ~Record() override {
      if (complete_) return;
      if (file_.is_open() || memory_) {
        std::fprintf(stderr,
                     "cache: the calling iterator did not fully read the dataset being cached; "
                     "the partially cached contents are discarded. To cache a part of a dataset, "
                     "use dataset.take(k).cache().repeat() instead.\n");
      }
      if (file_.is_open()) {
        file_.close();
        std::error_code ignored;
        fs::remove(temp_, ignored);
        fs::remove(lockfile_, ignored);
      }
    }

   protected:
    bool next_internal(Chunk& out, size_t max) override {
      const size_t before = out.size();
      if (!input_.next(out, max)) {
        finish();
        return false;
      }
      for (size_t i = before; i < out.size(); ++i) {
        if (!out[i].ok()) continue;
        if (memory_) recorded_.push_back(out[i].element);
        if (file_.is_open()) write_element(file_, out[i].element);
      }
      if (file_.is_open() && !file_) throw DataLoss(str_cat("cannot write cache file '", temp_, "'"));
      return true;
    }

   private:
    void open_file() {
      lockfile_ = prefix_ + ".lockfile";
      const int fd = ::open(lockfile_.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
      if (fd < 0) {
        if (errno == EEXIST) {
          throw AlreadyExists(str_cat(
              "There appears to be a concurrent caching iterator running - cache lockfile already "
              "exists ('", lockfile_, "'). If you are sure no other running process is writing "
              "the cache, remove the lockfile and try again."));
        }
        throw NotFound(str_cat("cannot create cache lockfile '", lockfile_, "': ",
                               std::strerror(errno)));
      }
      ::close(fd);
      temp_ = str_cat(prefix_, ".sluice-cache.tmp-", ::getpid());
      file_.open(temp_, std::ios::binary | std::ios::trunc);
      if (!file_) {
        fs::remove(lockfile_);
        throw NotFound(str_cat("cannot create cache file '", temp_, "'"));
      }
      file_.write(kMagic, sizeof(kMagic));
    }

    void finish() {
      if (complete_) return;
      complete_ = true;
      if (memory_) {
        std::lock_guard<std::mutex> lock(memory_->mutex);
        if (!memory_->elements) {
          memory_->elements =
              std::make_shared<const std::vector<Element>>(std::move(recorded_));
        }
      }
      if (file_.is_open()) {
        file_.flush();
        file_.close();
        if (!file_) throw DataLoss(str_cat("cannot write cache file '", temp_, "'"));
        fs::rename(temp_, prefix_ + ".sluice-cache");
        fs::remove(lockfile_);
      }
    }

    StageInput input_;
    std::shared_ptr<MemoryCache> memory_;
    std::vector<Element> recorded_;
    std::string prefix_, lockfile_, temp_;
    std::ofstream file_;
    bool complete_ = false;
  };

  std::string filename_;
  std::shared_ptr<MemoryCache> memory_ = std::make_shared<MemoryCache>();
};

}  // namespace

PlanPtr make_cache(PlanPtr input, std::string filename) {
  return std::make_shared<CacheNode>(std::move(input), std::move(filename));
}

}  // namespace sluice
