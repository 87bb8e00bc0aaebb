// EventFileWriter: writes a TensorBoard event file (events.out.tfevents.*), the TFRecord-framed
// stream of tensorflow.Event protos that TensorBoard reads from a log directory. The first record
// of every file is the file-version event ("brain.Event:2"); scalars follow as Summary events.
//
// Buffers: records go through a TFRecordWriter (up to 256 KiB) and reach the file at flush(),
// close() or when that buffer fills; the file-version record is flushed at once, as TensorFlow's
// EventsWriter does, so a new file is readable immediately.
// Thread safety: none; one writer per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

class TFRecordWriter;

// The payloads (serialized Event protos, without TFRecord framing) of the two kinds of records
// this writer makes; exposed so they can be checked against TensorFlow's bytes.
std::string encode_file_version_event(double wall_time);
std::string encode_scalars_event(double wall_time, int64_t step,
                                 const std::vector<std::pair<std::string, float>>& values);
// SessionLog{status=CHECKPOINT, checkpoint_path}: how TensorBoard learns where checkpoints are.
std::string encode_checkpoint_event(double wall_time, int64_t step, std::string_view path);

struct EventFileWriterOptions {
  // Seconds since the epoch; the system clock when unset. Tests fix it to get exact bytes.
  std::function<double()> clock;
  // Appended to the file name (TF2 writers use ".v2").
  std::string filename_suffix;
};

class EventFileWriter {
 public:
  // Creates `logdir` (and parents) if needed and a new file in it named
  // events.out.tfevents.<10-digit seconds>.<hostname>.<pid>.<n>, n counting the writers this
  // process made: the pid and counter keep two writers of one directory from colliding (as
  // TensorBoard's Python writer does). Writes and flushes the file-version record.
  // Throws an Error naming the file when it cannot be created.
  explicit EventFileWriter(const std::string& logdir, EventFileWriterOptions options = {});
  ~EventFileWriter();
  EventFileWriter(EventFileWriter&&) noexcept;
  EventFileWriter& operator=(EventFileWriter&&) noexcept;

  // One Event at `step` holding a simple_value per (tag, value), in the order given.
  // REQUIRES: values is not empty; not closed.
  void add_scalars(int64_t step, const std::vector<std::pair<std::string, float>>& values);
  void add_scalar(std::string_view tag, float value, int64_t step) {
    add_scalars(step, {{std::string(tag), value}});
  }
  // A SessionLog CHECKPOINT event naming the checkpoint written at `step`.
  void add_checkpoint(int64_t step, std::string_view checkpoint_path);

  // Hands what was written to the operating system, so a running TensorBoard sees it.
  void flush();
  // Flushes and closes; idempotent. Throws an Error naming the file when writing failed.
  void close();

  const std::string& path() const { return path_; }

 private:
  double now() const;

  std::string path_;
  std::function<double()> clock_;
  std::unique_ptr<TFRecordWriter> writer_;
};

}  // namespace sluice
