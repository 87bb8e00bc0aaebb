// Source stages: where elements enter a pipeline. range, from_tensors, from_tensor_slices,
// from_generator, and make_source() for readers defined elsewhere (files, records, archives).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/element.h"
#include "graph/plan.h"

namespace sluice {

// Integers start, start+step, ... before stop, as int64 scalars. REQUIRES: step != 0.
PlanPtr make_range(int64_t start, int64_t stop, int64_t step);

// The single element `element`.
PlanPtr make_from_tensors(Element element);

// Element i holds row i of every component; when `components` has an origin (the file its
// tensors were read from), element i's origin is record i of that source. Throws InvalidArgument
// when the components disagree on their first dimension or one is a scalar.
PlanPtr make_from_tensor_slices(Element components);

// A function returning the next element, or nullopt at the end. Each iterator (each epoch under
// repeat) calls `make_generator` for a fresh one.
using Generator = std::function<std::optional<Element>()>;
PlanPtr make_from_generator(std::function<Generator()> make_generator);

// A reader of elements defined outside graph/ (TFRecord files, image folders, archives).
class ElementSource {
 public:
  virtual ~ElementSource() = default;
  // Appends 1 to `max` items and returns true, or returns false at the end. May throw: the error
  // becomes an item and the source ends.
  virtual bool next(Chunk& out, size_t max) = 0;
};
PlanPtr make_source(std::string name, int64_t cardinality,
                    std::function<std::unique_ptr<ElementSource>()> open);

}  // namespace sluice
