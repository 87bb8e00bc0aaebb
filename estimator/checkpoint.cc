#include "sluice/estimator/checkpoint.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "sluice/core/errors.h"
#include "sluice/core/file_system.h"
#include "sluice/core/strings.h"
#include "sluice/formats/crc32c.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'S', 'L', 'U', 'I', 'C', 'K', 'P', 'T'};
constexpr uint32_t kVersion = 1;
constexpr const char* kIndexName = "checkpoint";
constexpr const char* kPrefix = "model.ckpt-";

template <class T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // The targets sluice supports are little-endian.
  out.append(bytes, sizeof(T));
}

// Reads fixed-size fields from a checkpoint's bytes, turning every overrun into DataLoss.
class Reader {
 public:
  Reader(std::string_view bytes, const std::string& path) : bytes_(bytes), path_(path) {}
  template <class T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }
  const char* take(size_t n) {
    if (n > bytes_.size() - offset_) fail("truncated");
    const char* p = bytes_.data() + offset_;
    offset_ += n;
    return p;
  }
  size_t offset() const { return offset_; }
  // Bytes from the offset to the trailing CRC.
  size_t remaining() const { return bytes_.size() - 4 - std::min(offset_, bytes_.size() - 4); }
  [[noreturn]] void fail(const std::string& what) const {
    throw DataLoss("checkpoint " + path_ + ": " + what + " at byte offset " +
                   std::to_string(offset_));
  }

 private:
  std::string_view bytes_;
  const std::string& path_;
  size_t offset_ = 0;
};

// Parses a quoted value of a CheckpointState text line: `key: "value"`.
std::optional<std::string> quoted_value(const std::string& line, const std::string& key) {
  if (line.rfind(key + ":", 0) != 0) return std::nullopt;
  const size_t open = line.find('"');
  const size_t close = line.rfind('"');
  if (open == std::string::npos || close <= open) return std::nullopt;
  return line.substr(open + 1, close - open - 1);
}

// The writer's pid of a temporary file WritableFile::replace made for a checkpoint, the index
// or one of `also` ("model.ckpt-<step>.tmp<pid>", "checkpoint.tmp<pid>"); nullopt for any other
// name.
std::optional<pid_t> temp_writer(const std::string& name, const std::vector<std::string>& also) {
  const std::optional<ReplacementName> temporary = parse_replacement_name(name);
  if (!temporary) return std::nullopt;
  const std::string& final_name = temporary->target;
  if (final_name != kIndexName && !checkpoint_step(final_name) &&
      std::find(also.begin(), also.end(), final_name) == also.end()) {
    return std::nullopt;
  }
  return static_cast<pid_t>(temporary->writer);
}

}  // namespace

void remove_abandoned_temp_files(const std::string& dir, const std::vector<std::string>& also) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto writer = temp_writer(entry.path().filename().string(), also);
    if (!writer || *writer == ::getpid()) continue;
    if (::kill(*writer, 0) == 0 || errno != ESRCH) continue;  // Alive (or not ours to signal).
    std::error_code ignored;
    fs::remove(entry.path(), ignored);
  }
}

void write_checkpoint_file(const std::string& path, const TensorMap& tensors) {
  for (const auto& [name, tensor] : tensors) {
    if (tensor.dtype() == DType::kString) {
      throw InvalidArgument("checkpoint " + path + ": tensor '" + name +
                            "' is a string tensor; checkpoints hold numeric tensors only");
    }
  }
  // Large tensors go to the file from their own memory, the CRC extended over them as they pass:
  // an input position holds megabytes of prefetched batches, not worth copying into one buffer.
  // Everything else collects in `pending`, so that small tensors cost no write of their own.
  constexpr size_t kWrittenInPlace = 64 << 10;
  WritableFile file = WritableFile::replace(path);
  uint32_t crc = 0;
  auto write = [&](std::string_view bytes) {
    crc = crc32c_extend(crc, bytes.data(), bytes.size());
    file.append(bytes);
  };
  std::string pending(kMagic, sizeof(kMagic));
  put<uint32_t>(pending, kVersion);
  put<uint32_t>(pending, static_cast<uint32_t>(tensors.size()));
  for (const auto& [name, tensor] : tensors) {
    put<uint32_t>(pending, static_cast<uint32_t>(name.size()));
    pending += name;
    put<uint8_t>(pending, static_cast<uint8_t>(tensor.dtype()));
    put<uint32_t>(pending, static_cast<uint32_t>(tensor.rank()));
    for (int64_t d : tensor.shape().dims()) put<int64_t>(pending, d);
    put<uint64_t>(pending, tensor.byte_size());
    const std::string_view data(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
    if (data.size() < kWrittenInPlace) {
      pending += data;
      continue;
    }
    write(pending);
    pending.clear();
    write(data);
  }
  write(pending);
  std::string trailer;
  put<uint32_t>(trailer, mask_crc32c(crc));
  file.append(trailer);
  file.close();
}

TensorMap read_checkpoint_file(const std::string& path) {
  // Mapped, not read into a buffer: a large model's checkpoint is then never in memory twice, and
  // its bytes go from the page cache straight into the tensors.
  const MappedFile file(path);
  const std::string_view bytes = file.bytes();
  Reader reader(bytes, path);
  if (bytes.size() < sizeof(kMagic) + 12 ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    reader.fail(bytes.size() < sizeof(kMagic) + 12 ? "truncated (too short)" : "bad magic");
  }
  // Check the CRC first: every later read can then trust the lengths it finds.
  uint32_t stored_crc;
  std::memcpy(&stored_crc, bytes.data() + bytes.size() - 4, 4);
  if (masked_crc32c(bytes.data(), bytes.size() - 4) != stored_crc) {
    throw DataLoss("checkpoint " + path + ": CRC mismatch over its " +
                   std::to_string(bytes.size()) + " bytes (truncated or corrupt)");
  }
  reader.take(sizeof(kMagic));
  const uint32_t version = reader.get<uint32_t>();
  if (version != kVersion) reader.fail("unsupported version " + std::to_string(version));
  const uint32_t count = reader.get<uint32_t>();
  TensorMap tensors;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t name_size = reader.get<uint32_t>();
    std::string name(reader.take(name_size), name_size);
    const uint8_t dtype = reader.get<uint8_t>();
    if (dtype > static_cast<uint8_t>(DType::kBFloat16)) reader.fail("bad dtype for '" + name + "'");
    const uint32_t rank = reader.get<uint32_t>();
    if (rank > static_cast<uint32_t>(Shape::kMaxRank)) reader.fail("bad rank for '" + name + "'");
    // The CRC only says the file is the one written: the shape is checked against the bytes
    // present before anything is allocated for it, so absurd dimensions are DataLoss, not
    // bad_alloc, and the restore falls back to an older checkpoint.
    std::vector<int64_t> dims(rank);
    uint64_t bytes_needed = dtype_size(static_cast<DType>(dtype));
    bool overflow = false;
    for (auto& d : dims) {
      d = reader.get<int64_t>();
      if (d < 0) reader.fail("negative dimension for '" + name + "'");
      overflow |= __builtin_mul_overflow(bytes_needed, static_cast<uint64_t>(d), &bytes_needed);
    }
    if (overflow) reader.fail("dimensions of '" + name + "' overflow 64 bits of bytes");
    const uint64_t size = reader.get<uint64_t>();
    if (size != bytes_needed) reader.fail("byte count disagrees with shape of '" + name + "'");
    if (size > reader.remaining()) {
      reader.fail("'" + name + "' needs " + std::to_string(size) + " bytes, more than the " +
                  std::to_string(reader.remaining()) + " left");
    }
    Tensor tensor =
        Tensor::uninitialized(static_cast<DType>(dtype), Shape(std::span<const int64_t>(dims)));
    std::memcpy(tensor.raw_data(), reader.take(size), size);
    tensors.emplace(std::move(name), std::move(tensor));
  }
  if (reader.offset() != bytes.size() - 4) reader.fail("trailing bytes");
  return tensors;
}

std::optional<CheckpointState> read_checkpoint_state(const std::string& dir) {
  const std::string path = (fs::path(dir) / kIndexName).string();
  std::string text;
  try {
    text = read_whole_file(path);
  } catch (const NotFound&) {
    return std::nullopt;
  }
  CheckpointState state;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (auto v = quoted_value(line, "model_checkpoint_path")) {
      state.model_checkpoint_path = *v;
    } else if (auto v = quoted_value(line, "all_model_checkpoint_paths")) {
      state.all_model_checkpoint_paths.push_back(*v);
    }
    // Other CheckpointState fields (timestamps) are accepted and ignored.
  }
  if (state.model_checkpoint_path.empty()) {
    throw DataLoss("checkpoint index " + path + " names no model_checkpoint_path");
  }
  return state;
}

void write_checkpoint_state(const std::string& dir, const CheckpointState& state) {
  std::string text = "model_checkpoint_path: \"" + state.model_checkpoint_path + "\"\n";
  for (const auto& p : state.all_model_checkpoint_paths) {
    text += "all_model_checkpoint_paths: \"" + p + "\"\n";
  }
  write_file_atomically((fs::path(dir) / kIndexName).string(), text);
}

std::optional<int64_t> checkpoint_step(const std::string& name) {
  const std::string prefix = kPrefix;
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return std::nullopt;
  int64_t step = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    step = step * 10 + (name[i] - '0');
  }
  return step;
}

CheckpointManager::CheckpointManager(std::string dir, int64_t keep_checkpoint_max)
    : dir_(std::move(dir)), keep_checkpoint_max_(keep_checkpoint_max) {
  if (keep_checkpoint_max_ < 0) throw InvalidArgument("keep_checkpoint_max must be >= 0");
}

std::string CheckpointManager::save(int64_t step, const TensorMap& tensors) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw NotFound("cannot create model_dir '" + dir_ + "': " + ec.message());
  const std::string name = kPrefix + std::to_string(step);
  const std::string path = (fs::path(dir_) / name).string();
  write_checkpoint_file(path, tensors);

  CheckpointState state;
  try {
    state = read_checkpoint_state(dir_).value_or(CheckpointState{});
  } catch (const DataLoss&) {
    state = {};  // A damaged index is replaced; the files themselves are still found by name.
  }
  auto& all = state.all_model_checkpoint_paths;
  all.erase(std::remove(all.begin(), all.end(), name), all.end());
  all.push_back(name);
  std::vector<std::string> pruned;
  if (keep_checkpoint_max_ > 0 && static_cast<int64_t>(all.size()) > keep_checkpoint_max_) {
    const auto excess = static_cast<std::ptrdiff_t>(all.size()) - keep_checkpoint_max_;
    pruned.assign(all.begin(), all.begin() + excess);
    all.erase(all.begin(), all.begin() + excess);
  }
  state.model_checkpoint_path = name;
  // The index is rewritten before old files go, so it never names a deleted checkpoint.
  write_checkpoint_state(dir_, state);
  for (const auto& old : pruned) fs::remove(fs::path(dir_) / old, ec);
  remove_abandoned_temp_files(dir_);
  return path;
}

std::vector<std::string> CheckpointManager::candidates_newest_first() const {
  std::vector<std::string> names;
  std::optional<CheckpointState> state;
  try {
    state = read_checkpoint_state(dir_);
  } catch (const DataLoss& e) {
    std::cerr << "sluice: " << e.what() << "; looking for model.ckpt-* files instead\n";
  }
  if (state) {
    names = state->all_model_checkpoint_paths;
    if (std::find(names.begin(), names.end(), state->model_checkpoint_path) == names.end()) {
      names.push_back(state->model_checkpoint_path);
    }
    std::reverse(names.begin(), names.end());
    return names;
  }
  std::error_code ec;
  std::vector<std::pair<int64_t, std::string>> found;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (auto step = checkpoint_step(name)) found.emplace_back(*step, name);
  }
  std::sort(found.rbegin(), found.rend());
  for (auto& [step, name] : found) names.push_back(std::move(name));
  return names;
}

std::optional<CheckpointManager::Restored> CheckpointManager::restore_latest() const {
  std::string skipped;  // The newest unreadable checkpoint, for the fallback message.
  std::string errors;   // Every unreadable one, for the error when none is readable.
  for (const std::string& name : candidates_newest_first()) {
    const std::string path =
        (fs::path(name).is_absolute() ? fs::path(name) : fs::path(dir_) / name).string();
    try {
      Restored restored{path, read_checkpoint_file(path)};
      if (!skipped.empty()) {
        std::cerr << "sluice: falling back to checkpoint " << path << " (" << skipped
                  << " is unreadable)\n";
      }
      return restored;
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kDataLoss && e.code() != ErrorCode::kNotFound) throw;
      std::cerr << "sluice: cannot restore checkpoint " << path << ": " << e.what() << "\n";
      if (skipped.empty()) skipped = path;
      errors += str_cat(errors.empty() ? "" : "; ", e.what());
    }
  }
  // Checkpoints that all fail to load are not a fresh start: training from step 0 would bury the
  // run they hold under new ones.
  if (!errors.empty()) {
    throw DataLoss(str_cat("no checkpoint in ", dir_, " is readable: ", errors));
  }
  return std::nullopt;
}

}  // namespace sluice
