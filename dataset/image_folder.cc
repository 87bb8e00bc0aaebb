#include "dataset/image_folder.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "core/errors.h"
#include "core/strings.h"
#include "formats/image.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool allowed(const fs::path& file, const std::set<std::string>& extensions) {
  std::string ext = file.extension().string();
  if (ext.size() < 2) return false;
  return extensions.count(lower(ext.substr(1))) != 0;
}

std::vector<std::string> list_class(const fs::path& class_dir, const std::set<std::string>& extensions,
                                    bool follow_links) {
  std::vector<std::string> files;
  auto flags = fs::directory_options::skip_permission_denied;
  if (follow_links) flags |= fs::directory_options::follow_directory_symlink;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(class_dir, flags, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_regular_file(type_ec) && allowed(it->path(), extensions)) {
      files.push_back(it->path().string());
    }
  }
  if (ec) {
    throw NotFound(str_cat("image_folder: cannot list ", class_dir.string(), ": ", ec.message()));
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NotFound(str_cat(path, ": cannot open: ", std::strerror(errno)));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw DataLoss(str_cat(path, ": read error"));
  return bytes;
}

}  // namespace

Tensor class_label(int64_t index, int64_t num_classes, ClassMode mode) {
  switch (mode) {
    case ClassMode::kCategorical: {
      Tensor one_hot(DType::kFloat32, Shape{num_classes});
      one_hot.data<float>()[index] = 1.0f;
      return one_hot;
    }
    case ClassMode::kBinary:
      return Tensor::scalar<float>(static_cast<float>(index));
    case ClassMode::kSparse:
      return Tensor::scalar<int64_t>(index);
    case ClassMode::kNone:
      break;
  }
  throw InvalidArgument("class_label: class_mode none has no labels");
}

namespace {

Dataset listing_dataset(const std::vector<std::string>& filenames,
                        const std::vector<int64_t>& labels, int64_t num_classes, ClassMode mode) {
  const auto n = static_cast<int64_t>(filenames.size());
  Tensor paths = Tensor::from_strings(filenames);
  switch (mode) {
    case ClassMode::kNone:
      return Dataset::from_tensor_slices(Element{{"path", paths}});
    case ClassMode::kSparse:
      return Dataset::from_tensor_slices(
          Element{{"path", paths}, {"label", Tensor::from_vector(labels)}});
    case ClassMode::kBinary: {
      const std::vector<float> binary(labels.begin(), labels.end());
      return Dataset::from_tensor_slices(
          Element{{"path", paths}, {"label", Tensor::from_vector(binary)}});
    }
    case ClassMode::kCategorical:
      break;
  }
  Tensor one_hot(DType::kFloat32, Shape{n, num_classes});
  float* p = one_hot.data<float>();
  for (int64_t i = 0; i < n; ++i) p[i * num_classes + labels[static_cast<size_t>(i)]] = 1;
  return Dataset::from_tensor_slices(Element{{"path", paths}, {"label", std::move(one_hot)}});
}

}  // namespace

ImageFolder image_folder(const std::string& dir, const ImageFolderOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw NotFound(str_cat("image_folder: ", dir, ": no such directory"));
  }
  std::vector<std::string> class_names = options.classes;
  if (class_names.empty()) {
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      std::error_code type_ec;
      if (it->is_directory(type_ec)) class_names.push_back(it->path().filename().string());
    }
    std::sort(class_names.begin(), class_names.end());
    if (class_names.empty()) {
      throw InvalidArgument(str_cat("image_folder: ", dir,
                                    " has no class sub-folders (expected one folder per class)"));
    }
  }
  const auto num_classes = static_cast<int64_t>(class_names.size());
  if (options.class_mode == ClassMode::kBinary && num_classes != 2) {
    throw InvalidArgument(str_cat("image_folder: class_mode binary needs exactly 2 classes, ", dir,
                                  " has ", num_classes, ": ", str_join(class_names, ", ")));
  }
  std::set<std::string> extensions;
  for (const std::string& e : options.allowed_extensions) {
    extensions.insert(lower(e.starts_with('.') ? e.substr(1) : e));
  }

  std::map<std::string, int64_t> class_indices;
  std::vector<std::string> filenames;
  std::vector<int64_t> labels;
  for (int64_t c = 0; c < num_classes; ++c) {
    const std::string& name = class_names[static_cast<size_t>(c)];
    if (!class_indices.emplace(name, c).second) {
      throw InvalidArgument(str_cat("image_folder: class \"", name, "\" given twice"));
    }
    const fs::path class_dir = fs::path(dir) / name;
    if (!fs::is_directory(class_dir, ec)) {
      throw NotFound(str_cat("image_folder: class folder ", class_dir.string(), " does not exist"));
    }
    for (std::string& file : list_class(class_dir, extensions, options.follow_links)) {
      filenames.push_back(std::move(file));
      labels.push_back(c);
    }
  }
  if (options.verbose) {
    std::printf("Found %zu images belonging to %lld classes.\n", filenames.size(),
                static_cast<long long>(num_classes));
    std::fflush(stdout);
  }
  Dataset dataset = listing_dataset(filenames, labels, num_classes, options.class_mode);
  return ImageFolder{std::move(dataset),  std::move(class_names), std::move(class_indices),
                     std::move(filenames), std::move(labels),      options.class_mode};
}

Dataset decode_image_folder(const ImageFolder& folder, int channels, int64_t num_parallel_calls) {
  const bool labelled = folder.class_mode != ClassMode::kNone;
  return folder.dataset.map(
      [channels, labelled](Element e) {
        const std::string& path = e["path"].item<std::string>();
        Tensor image = decode_image(read_whole_file(path), channels, path);
        if (!labelled) return Element{{"image", std::move(image)}};
        return Element{{"image", std::move(image)}, {"label", e["label"]}};
      },
      {.num_parallel_calls = num_parallel_calls});
}

}  // namespace sluice
