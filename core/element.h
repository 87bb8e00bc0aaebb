// Element: the unit that flows through a pipeline, an ordered tuple of tensors whose components
// may also be named, as tf.data's nested structures: e[0], e["image"]. Names are shared between
// elements of one stream, so naming costs nothing per element. An element also remembers where
// it was read (its origin), so an error raised far downstream of the reader can name the input.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/tensor.h"
#include "sluice/core/tensor_list.h"

namespace sluice {

// Where an element was read: the file (or "<archive>/<member>") and its record index there — or,
// for text read line by line, its line number — as tf.data's error context names the input. Sources
// that read files set it; stages that pass elements on one to one keep it, a map's output inherits
// its input's, and a batch has none. Not part of the element's value: Element::equals ignores it.
//
// An immutable value of one pointer: an element without an origin (made in memory) pays a null
// pointer and nothing else; one with an origin pays an allocation where it is read, and copies
// share it (thread-safe reference count).
class ElementOrigin {
 public:
  ElementOrigin() = default;
  // Record `record` of `source` (-1: the element is all of it). REQUIRES: source != nullptr.
  explicit ElementOrigin(std::shared_ptr<const std::string> source, int64_t record = -1);
  // Line `line` (counted from 1) of the text file `source`. REQUIRES: source != nullptr.
  static ElementOrigin line(std::shared_ptr<const std::string> source, int64_t line);
  ElementOrigin(const ElementOrigin& other) noexcept : rep_(other.rep_) {
    if (rep_) rep_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  ElementOrigin(ElementOrigin&& other) noexcept : rep_(std::exchange(other.rep_, nullptr)) {}
  ElementOrigin& operator=(const ElementOrigin& other) noexcept {
    return *this = ElementOrigin(other);
  }
  ElementOrigin& operator=(ElementOrigin&& other) noexcept {
    if (Rep* old = std::exchange(rep_, std::exchange(other.rep_, nullptr))) release(old);
    return *this;
  }
  ~ElementOrigin() {
    if (rep_) release(rep_);
  }

  explicit operator bool() const { return rep_ != nullptr; }
  // The file or member; "" when unknown.
  std::string_view source() const { return rep_ ? std::string_view(*rep_->source) : ""; }
  // The record index, or the line number of a line origin.
  int64_t record() const { return rep_ ? rep_->record : -1; }
  bool is_line() const { return rep_ && rep_->is_line; }
  // The same source at another record (line). REQUIRES: *this.
  ElementOrigin at_record(int64_t record) const {
    return ElementOrigin(rep_->source, record, rep_->is_line);
  }
  // "data/train-00000-of-00002 record 27", "photos.zip/cats/1.jpg", "data/train.csv:12"; "" when
  // unknown.
  std::string to_string() const;

 private:
  struct Rep {
    std::atomic<int64_t> refs{1};
    std::shared_ptr<const std::string> source;
    int64_t record;
    bool is_line;
  };
  ElementOrigin(std::shared_ptr<const std::string> source, int64_t record, bool is_line);
  static void release(Rep* rep) noexcept;  // Drops a reference; the last one frees `rep`.

  Rep* rep_ = nullptr;
};

class Element {
 public:
  using Names = std::vector<std::string>;

  Element() = default;
  Element(std::initializer_list<Tensor> components) : components_(components) {}
  // One component, moved in (braces would copy it from the initializer list).
  explicit Element(Tensor only) : components_(std::move(only)) {}
  explicit Element(std::vector<Tensor> components) : components_(std::move(components)) {}
  // Named components, in order: Element{{"image", image}, {"label", label}}.
  Element(std::initializer_list<std::pair<std::string, Tensor>> named);
  // Components with the names of another element (shared, not copied). REQUIRES: the sizes agree.
  Element(std::vector<Tensor> components, std::shared_ptr<const Names> names);

  size_t size() const { return components_.size(); }
  bool empty() const { return components_.empty(); }

  Tensor& operator[](size_t i) { return components_[i]; }
  const Tensor& operator[](size_t i) const { return components_[i]; }
  // The component called `name`. Throws NotFound listing the names there are.
  Tensor& operator[](std::string_view name) { return components_[index_of(name)]; }
  const Tensor& operator[](std::string_view name) const { return components_[index_of(name)]; }

  size_t index_of(std::string_view name) const;
  bool has(std::string_view name) const;
  // The component's name, "" when unnamed.
  std::string_view name(size_t i) const;
  bool is_named() const { return names_ != nullptr; }
  const std::shared_ptr<const Names>& names() const { return names_; }

  const ElementOrigin& origin() const { return origin_; }
  void set_origin(ElementOrigin origin) { origin_ = std::move(origin); }

  void push_back(Tensor tensor, std::string_view name = {});

  TensorList& components() { return components_; }
  const TensorList& components() const { return components_; }
  auto begin() { return components_.begin(); }
  auto end() { return components_.end(); }
  auto begin() const { return components_.begin(); }
  auto end() const { return components_.end(); }

  // Same names and component-wise Tensor::equals.
  bool equals(const Element& other) const;
  std::string debug_string() const;  // "(image: uint8[2, 2] ..., label: int64[] 3)"

 private:
  TensorList components_;
  std::shared_ptr<const Names> names_;  // Null when no component is named.
  ElementOrigin origin_;
};

std::ostream& operator<<(std::ostream& out, const Element& element);

}  // namespace sluice
