// Column sums of a row-major [rows, columns] matrix whose rows are short: a layer's channels or
// filters, tens of values. Summed row by row, every row's additions wait on the previous row's
// through the same few sums (and through memory when the column count is not known at compile
// time). Here whole groups of rows, lcm(columns, 16) values long, are added elementwise into as
// many partial sums, a loop compilers vectorise without a chain, and the partials are folded into
// their columns at the end. The order of the additions is fixed by the shape alone.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

namespace sluice::internal {

constexpr int64_t kMaxColumnSumsGroup = 256;

// The group's length: lcm(columns, 16) where that is short enough, else one row.
inline int64_t column_sums_group(int64_t columns) {
  const int64_t group = std::lcm(columns, int64_t{16});
  return group <= kMaxColumnSumsGroup ? group : columns;
}

// sums[c] += Σ_r value(r·columns + c, j), where j = (r·columns + c) mod column_sums_group(columns)
// is the value's place in its group, in column j mod columns: callers whose values depend on the
// column index arrays repeated to the group's length with it.
template <class Sum, class Value>
void add_column_sums(int64_t rows, int64_t columns, const Value& value, Sum* sums) {
  const int64_t group = column_sums_group(columns);
  const int64_t n = rows * columns;
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
  add_column_sums(rows, columns, [x](int64_t i, int64_t) { return Sum(x[i]); }, sums);
}

// Per-column values by place in a group: values[j mod columns] for j < group.
template <class T>
std::vector<T> repeat_to_group(const std::vector<T>& values, int64_t group) {
  std::vector<T> out(static_cast<size_t>(group));
  for (size_t j = 0; j < out.size(); ++j) out[j] = values[j % values.size()];
  return out;
}

// f(i, i mod group) for every i < n, group by group: elementwise work whose per-column values
// come from repeat_to_group arrays, in loops as long as a group.
template <class F>
void for_each_in_groups(int64_t n, int64_t group, const F& f) {
  for (int64_t begin = 0; begin < n; begin += group) {
    const int64_t length = std::min(group, n - begin);
    for (int64_t j = 0; j < length; ++j) f(begin + j, j);
  }
}

}  // namespace sluice::internal
