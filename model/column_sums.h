// Column sums of a row-major [rows, columns] matrix whose rows are short: a layer's channels or
// filters, tens of values. Summed row by row, every row's additions wait on the previous row's
// through the same few sums (and through memory when the column count is not known at compile
// time). Here whole groups of rows, lcm(columns, 16) values long, are added elementwise into as
// many partial sums, a loop compilers vectorise without a chain, and the partials are folded into
// their columns at the end. The order of the additions is fixed by the shape alone.
#pragma once

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

#include "sluice/model/vector_clones.h"

namespace sluice::internal {

constexpr int64_t kMaxColumnSumsGroup = 256;

// The group's length: lcm(columns, 16) where that is short enough, else one row (and 1 for a
// matrix without columns, whose loops then do nothing).
inline int64_t column_sums_group(int64_t columns) {
  if (columns <= 0) return 1;
  const int64_t group = std::lcm(columns, int64_t{16});
  return group <= kMaxColumnSumsGroup ? group : columns;
}

// sums[c] += Σ_r value(r·columns + c, j), where j = (r·columns + c) mod column_sums_group(columns)
// is the value's place in its group, in column j mod columns: callers whose values depend on the
// column index arrays repeated to the group's length with it.
template <class Sum, class Value>
SLUICE_VECTOR_CLONES void add_column_sums(int64_t rows, int64_t columns, const Value& value,
                                          Sum* sums) {
  const int64_t group = column_sums_group(columns);
  const int64_t n = rows * columns;
  if (n <= 0) return;
  if (group > kMaxColumnSumsGroup) {
    for (int64_t i = 0; i < n; i += columns) {
      for (int64_t c = 0; c < columns; ++c) sums[c] += value(i + c, c);
    }
    return;
  }
  std::array<Sum, kMaxColumnSumsGroup> partial{};
  const int64_t whole = n - n % group;
  for (int64_t i = 0; i < whole; i += group) {
    for (int64_t j = 0; j < group; ++j) partial[j] += value(i + j, j);
  }
  // What is left is less than a group but whole rows, so position j is still column j mod columns.
  for (int64_t i = whole; i < n; ++i) partial[i - whole] += value(i, i - whole);
  for (int64_t j = 0; j < group; ++j) sums[j % columns] += partial[j];
}

// The plain case: sums[c] += Σ_r x[r·columns + c].
template <class Sum>
void add_column_sums(const float* x, int64_t rows, int64_t columns, Sum* sums) {
  add_column_sums(
      rows, columns, [x](int64_t i, int64_t) { return Sum(x[i]); }, sums);
}

// Per-column values by place in a group: values[j mod columns] for j < group.
template <class T>
std::vector<T> repeat_to_group(const std::vector<T>& values, int64_t group) {
  std::vector<T> out(static_cast<size_t>(group));
  for (size_t j = 0; j < out.size(); ++j) out[j] = values[j % values.size()];
  return out;
}

// f(i, i mod group) for every i < n of groups [first, last).
template <class F>
SLUICE_VECTOR_CLONES void apply_in_groups(int64_t first, int64_t last, int64_t n, int64_t group,
                                          const F& f) {
  for (int64_t g = first; g != last; ++g) {
    const int64_t begin = g * group;
    const int64_t length = std::min(group, n - begin);
    for (int64_t j = 0; j < length; ++j) f(begin + j, j);
  }
}

// f(i, i mod group) for every i < n, group by group, groups in parallel: elementwise work whose
// per-column values come from repeat_to_group arrays, in loops as long as a group.
template <class F>
void for_each_in_groups(int64_t n, int64_t group, const F& f) {
  constexpr int64_t kGroupsPerTask = 256;
  const int64_t groups = (n + group - 1) / group;
  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<int64_t>(0, groups, kGroupsPerTask),
      [&](const auto& range) { apply_in_groups(range.begin(), range.end(), n, group, f); });
}

// The column sums of add_column_sums, in double, of a fixed number of chunks of rows summed in
// parallel and added in chunk order: the result does not depend on the thread count.
template <class Value>
std::vector<double> column_sums_in_chunks(int64_t rows, int64_t columns, const Value& value) {
  constexpr int64_t kChunks = 8;
  std::vector<double> partial(static_cast<size_t>(kChunks * columns), 0.0);
  oneapi::tbb::parallel_for(oneapi::tbb::blocked_range<int64_t>(0, kChunks, 1),
                            [&](const auto& range) {
                              for (int64_t k = range.begin(); k != range.end(); ++k) {
                                const int64_t first = rows * k / kChunks;
                                const int64_t base = first * columns;
                                add_column_sums(
                                    rows * (k + 1) / kChunks - first, columns,
                                    [&](int64_t i, int64_t j) { return value(base + i, j); },
                                    partial.data() + k * columns);
                              }
                            });
  std::vector<double> sums(static_cast<size_t>(columns), 0.0);
  for (int64_t k = 0; k < kChunks; ++k) {
    for (int64_t c = 0; c < columns; ++c) sums[c] += partial[k * columns + c];
  }
  return sums;
}

}  // namespace sluice::internal
