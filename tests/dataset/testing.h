// Helpers shared by the dataset tests, and the conformance check every op passes (as tf.data's
// DatasetOpsTestBase): exact output, end of sequence stays ended, cardinality agrees, and the
// same output at 1, 2 and 8 threads and with the static rewrites off.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dataset/dataset.h"
#include "graph/async_stage.h"

namespace sluice::testing {

inline Element I(int64_t v) { return Element{Tensor::scalar<int64_t>(v)}; }
inline Element V(std::vector<int64_t> v) { return Element{Tensor::from_vector<int64_t>(v)}; }

inline Options threads(int n) {
  Options o;
  o.threads = n;
  return o;
}

inline std::vector<Element> collect(const Dataset& ds, const Options& options = {}) {
  std::vector<Element> out;
  Iterator it = ds.make_iterator(options);
  while (auto e = it.next()) out.push_back(std::move(*e));
  return out;
}

// The int64 scalar of each element.
inline std::vector<int64_t> ints(const Dataset& ds, const Options& options = {}) {
  std::vector<int64_t> out;
  for (const Element& e : collect(ds, options)) out.push_back(e[0].item<int64_t>());
  return out;
}

// The message of the first error the dataset gives; a test failure (and "") when it gives none.
inline std::string error_message(const Dataset& ds, const Options& options = {}) {
  Iterator it = ds.make_iterator(options);
  try {
    while (it.next()) {
    }
  } catch (const std::exception& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

inline std::vector<int64_t> range_vector(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

inline void expect_elements(const std::vector<Element>& actual,
                            const std::vector<Element>& expected, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_TRUE(actual[i].equals(expected[i]))
        << what << ": element " << i << " is " << actual[i] << ", expected " << expected[i];
  }
}

inline void expect_dataset(const Dataset& ds, const std::vector<Element>& expected) {
  {
    Iterator it = ds.make_iterator();
    std::vector<Element> got;
    while (auto e = it.next()) got.push_back(std::move(*e));
    expect_elements(got, expected, "default options");
    EXPECT_FALSE(it.next().has_value()) << "end of sequence must stay ended";
    EXPECT_FALSE(it.next().has_value()) << "end of sequence must stay ended";
  }
  const int64_t cardinality = ds.cardinality();
  if (cardinality >= 0) {
    EXPECT_EQ(cardinality, static_cast<int64_t>(expected.size()));
  }
  for (int n : {1, 2, 8}) {
    expect_elements(collect(ds, threads(n)), expected, "threads=" + std::to_string(n));
  }
  Options unoptimized;
  unoptimized.static_optimizations = false;
  expect_elements(collect(ds, unoptimized), expected, "without static optimizations");
}

inline std::vector<Element> Is(const std::vector<int64_t>& values) {
  std::vector<Element> out;
  for (int64_t v : values) out.push_back(I(v));
  return out;
}

// The process's threads named as pipeline feeders. A oneTBB worker launched from a feeder thread
// inherits the name, so this shows that feeders are named, not how many are running: for that,
// live_feeder_threads() (graph/async_stage.h).
inline int threads_named_feeder() {
  int n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::string name;
    std::getline(std::ifstream(task.path() / "comm"), name);
    if (name == kFeederThreadName) ++n;
  }
  return n;
}

}  // namespace sluice::testing
