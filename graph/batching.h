// Stacking elements into batches: shared by batch, padded_batch and map_and_batch. Each element's
// data is copied exactly once, into the batch.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/element.h"
#include "graph/stage.h"

namespace sluice {

// How padded_batch pads each component: to `shape` (-1 entries: the batch's largest size in that
// dimension; an empty spec: largest in every dimension), with `value` (default 0 or "").
struct PaddingSpec {
  std::vector<std::vector<int64_t>> shapes;  // Per component; empty: pad to the batch maximum.
  std::vector<Tensor> values;                // Per component scalar; empty: zeros.
};

// One element whose components are the given elements' components stacked along a new first
// dimension. Throws InvalidArgument naming the component and the first mismatching element when
// the structure, dtypes or shapes differ (with padding, when a shape exceeds its padded shape).
// REQUIRES: !elements.empty().
Element stack_elements(std::span<const Element> elements, const PaddingSpec* padding = nullptr);

// The item of a batch made of `items`: the first error among them if any (a batch with a failed
// element fails as a whole), else the stacked element, or the stacking error.
Item batch_items(std::span<Item> items, const PaddingSpec* padding = nullptr);

}  // namespace sluice
