// TemporaryModelDir: the model_dir of a command run without --model-dir. It is a new directory
// `sluice-model-XXXXXX` under the system's temporary directory, removed with everything in it
// when the object is destroyed (at the end of the run, or while an error unwinds) unless the user
// asked to keep it, so that runs without --model-dir leave nothing behind.
#pragma once

#include <string>

namespace sluice::app {

class TemporaryModelDir {
 public:
  // Creates the directory (mode 0700). Throws Internal naming the pattern and the system's reason
  // when it cannot be created.
  TemporaryModelDir();
  // Removes the directory and its contents unless keep() was called. Never throws: a file that
  // cannot be removed is left where it is.
  ~TemporaryModelDir();

  TemporaryModelDir(const TemporaryModelDir&) = delete;
  TemporaryModelDir& operator=(const TemporaryModelDir&) = delete;

  const std::string& path() const { return path_; }
  // The directory outlives this object (the user wants its checkpoints).
  void keep() { keep_ = true; }
  bool kept() const { return keep_; }

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace sluice::app
