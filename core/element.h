// Element: the unit that flows through a pipeline, an ordered tuple of tensors whose components
// may also be named, as tf.data's nested structures: e[0], e["image"]. Names are shared between
// elements of one stream, so naming costs nothing per element.
#pragma once

#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace sluice {

class Element {
 public:
  using Names = std::vector<std::string>;

  Element() = default;
  Element(std::initializer_list<Tensor> components) : components_(components) {}
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

  void push_back(Tensor tensor, std::string_view name = {});

  std::vector<Tensor>& components() { return components_; }
  const std::vector<Tensor>& components() const { return components_; }
  auto begin() { return components_.begin(); }
  auto end() { return components_.end(); }
  auto begin() const { return components_.begin(); }
  auto end() const { return components_.end(); }

  // Same names and component-wise Tensor::equals.
  bool equals(const Element& other) const;
  std::string debug_string() const;  // "(image: uint8[2, 2] ..., label: int64[] 3)"

 private:
  std::vector<Tensor> components_;
  std::shared_ptr<const Names> names_;  // Null when no component is named.
};

std::ostream& operator<<(std::ostream& out, const Element& element);

}  // namespace sluice
