// The split folders of an image folder, laid out as Keras users lay them out: train/ beside test/
// (or validation/, val/), each holding one folder per class. They are found alike in a directory
// and in a zip or tar of one, so an archive is read exactly as the folder it holds, and a split
// name is never taken for a class.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

struct FolderSplits {
  std::string train;          // dir/train, or dir itself when it has no split folders.
  std::string held_out;       // dir/test (else validation, else val); "" when there is none.
  std::string held_out_name;  // "test/", "validation/" or "val/"; "" when there is none.
  bool has_splits = false;    // Whether dir holds split folders at all.
};

// "train", "test", "validation" or "val".
bool is_split_name(std::string_view name);

// Looks at the folders directly inside `dir` (a directory, or a zip/tar or a folder inside one, as
// image_folder takes). Throws InvalidArgument naming them for split folders beside other folders
// or split folders without train/, and image_folder's errors for an archive it cannot list.
FolderSplits find_splits(const std::string& dir);

}  // namespace sluice
