// window, flat_map, group_by_window, bucket_by_sequence_length and rejection_resample: tf.data's
// documented examples with their documented outputs, cardinality, errors, and the checkpoint
// conformance of every stage.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "sluice/core/errors.h"
#include "sluice/core/random.h"
#include "sluice/dataset/dataset.h"
#include "tests/dataset/testing.h"

namespace sluice {
namespace {

using testing::collect;
using testing::error_message;
using testing::expect_dataset;
using testing::expect_resumes;
using testing::I;
using testing::ints;
using testing::Is;
using testing::V;

// The int64 scalars of a window element, in order.
std::vector<int64_t> window_values(const Element& window) {
  return ints(Dataset::from_window(window));
}

std::vector<std::vector<int64_t>> windows_of(const Dataset& ds) {
  std::vector<std::vector<int64_t>> out;
  for (const Element& w : ds) out.push_back(window_values(w));
  return out;
}

using Rows = std::vector<std::vector<int64_t>>;

// Element i is the int64 vector rows[i] (variable lengths), through a map over range so that the
// dataset can be saved.
Dataset sequences(Rows rows) {
  const auto n = static_cast<int64_t>(rows.size());
  return Dataset::range(n).map([rows = std::move(rows)](const Tensor& i) {
    return Tensor::from_vector<int64_t>(rows[static_cast<size_t>(i.item<int64_t>())]);
  });
}

// A batch of rows of one length, as an element.
Element matrix(const Rows& rows) {
  std::vector<int64_t> flat;
  for (const auto& row : rows) flat.insert(flat.end(), row.begin(), row.end());
  return Element{Tensor::from_vector<int64_t>(
      flat, Shape{static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())})};
}

int64_t length_of(const Tensor& t) { return t.dim(0); }

// --- window ------------------------------------------------------------------------------------

TEST(WindowTest, DocumentedExamples) {
  // tf.data.Dataset.window's docstring.
  EXPECT_EQ(windows_of(Dataset::range(7).window(3)), (Rows{{0, 1, 2}, {3, 4, 5}, {6}}));
  EXPECT_EQ(windows_of(Dataset::range(7).window(3, 1, 1, true)),
            (Rows{{0, 1, 2}, {1, 2, 3}, {2, 3, 4}, {3, 4, 5}, {4, 5, 6}}));
  EXPECT_EQ(windows_of(Dataset::range(7).window(3, 1, 2, true)),
            (Rows{{0, 2, 4}, {1, 3, 5}, {2, 4, 6}}));
  // The raw op's documentation: range(7).window(2) and window(3, 2, 1, true).
  EXPECT_EQ(windows_of(Dataset::range(7).window(2)), (Rows{{0, 1}, {2, 3}, {4, 5}, {6}}));
  EXPECT_EQ(windows_of(Dataset::range(7).window(3, 2, 1, true)),
            (Rows{{0, 1, 2}, {2, 3, 4}, {4, 5, 6}}));
}

TEST(WindowTest, ShorterWindowsAtTheEndWithoutDropRemainder) {
  EXPECT_EQ(windows_of(Dataset::range(7).window(3, 1)),
            (Rows{{0, 1, 2}, {1, 2, 3}, {2, 3, 4}, {3, 4, 5}, {4, 5, 6}, {5, 6}, {6}}));
  EXPECT_EQ(windows_of(Dataset::range(7).window(3, 1, 2)),
            (Rows{{0, 2, 4}, {1, 3, 5}, {2, 4, 6}, {3, 5}, {4, 6}, {5}, {6}}));
  // A shift past the window drops the elements between windows.
  EXPECT_EQ(windows_of(Dataset::range(10).window(2, 4)), (Rows{{0, 1}, {4, 5}, {8, 9}}));
  EXPECT_EQ(windows_of(Dataset::range(0).window(2)), Rows{});
}

TEST(WindowTest, FlatMapOfBatchesIsTheSlidingWindowPattern) {
  // The pattern tf.data's documentation gives: ds.window(3, 1, 1, true).flat_map(batch(3)).
  auto ds =
      Dataset::range(6).window(3, 1, 1, true).flat_map([](const Dataset& w) { return w.batch(3); });
  expect_dataset(ds, {V({0, 1, 2}), V({1, 2, 3}), V({2, 3, 4}), V({3, 4, 5})});
}

TEST(WindowTest, NestedElementsGiveOneDatasetPerComponent) {
  // tf.data's docstring: from_tensor_slices(([1..5], [6..10])).window(2) gives
  // ([1, 2], [6, 7]), ([3, 4], [8, 9]), ([5], [10]).
  auto ds = Dataset::from_tensor_slices(Element{Tensor::from_vector<int64_t>({1, 2, 3, 4, 5}),
                                                Tensor::from_vector<int64_t>({6, 7, 8, 9, 10})})
                .window(2);
  std::vector<Rows> got;
  for (const Element& w : ds) {
    got.push_back({ints(Dataset::from_window(w, 0)), ints(Dataset::from_window(w, 1))});
  }
  EXPECT_EQ(got, (std::vector<Rows>{{{1, 2}, {6, 7}}, {{3, 4}, {8, 9}}, {{5}, {10}}}));
  // And whole elements, as tf.data's flat_map(lambda x, y: zip(x.batch(2), y.batch(2))).
  expect_dataset(
      ds.flat_map([](const Dataset& w) { return w.batch(2); }),
      {Element{Tensor::from_vector<int64_t>({1, 2}), Tensor::from_vector<int64_t>({6, 7})},
       Element{Tensor::from_vector<int64_t>({3, 4}), Tensor::from_vector<int64_t>({8, 9})},
       Element{Tensor::from_vector<int64_t>({5}), Tensor::from_vector<int64_t>({10})}});
}

TEST(WindowTest, NamedComponentsKeepTheirNames) {
  // tf.data's docstring: {'a': [1, 2, 3], 'b': [4, 5, 6], 'c': [7, 8, 9]}.window(2) gives
  // {'a': [1, 2], 'b': [4, 5], 'c': [7, 8]} and {'a': [3], 'b': [6], 'c': [9]}.
  auto ds = Dataset::from_tensor_slices(Element{{"a", Tensor::from_vector<int64_t>({1, 2, 3})},
                                                {"b", Tensor::from_vector<int64_t>({4, 5, 6})},
                                                {"c", Tensor::from_vector<int64_t>({7, 8, 9})}})
                .window(2);
  const std::vector<Element> windows = collect(ds);
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].name(0), "window");
  EXPECT_EQ(windows[0].name(4), "1/a");
  const std::vector<Element> batches =
      collect(ds.flat_map([](const Dataset& w) { return w.batch(2); }));
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_TRUE(batches[0].equals(Element{{"a", Tensor::from_vector<int64_t>({1, 2})},
                                        {"b", Tensor::from_vector<int64_t>({4, 5})},
                                        {"c", Tensor::from_vector<int64_t>({7, 8})}}))
      << batches[0];
  EXPECT_TRUE(batches[1].equals(Element{{"a", Tensor::from_vector<int64_t>({3})},
                                        {"b", Tensor::from_vector<int64_t>({6})},
                                        {"c", Tensor::from_vector<int64_t>({9})}}))
      << batches[1];
  const std::vector<Element> b = collect(Dataset::from_window(windows[1], 1));
  ASSERT_EQ(b.size(), 1u);
  EXPECT_TRUE(b[0].equals(Element{{"b", Tensor::scalar<int64_t>(6)}}));
}

TEST(WindowTest, WindowsOfElementsOfDifferentShapes) {
  auto ds = sequences({{1}, {2, 3}, {4, 5, 6}, {7}}).window(2).flat_map([](const Dataset& w) {
    return w.padded_batch(2);
  });
  expect_dataset(ds, {matrix({{1, 0}, {2, 3}}), matrix({{4, 5, 6}, {7, 0, 0}})});
}

TEST(WindowTest, CardinalityIsTheNumberOfWindows) {
  for (int64_t n : {0, 1, 5, 7, 12}) {
    for (int64_t size : {1, 2, 3, 5}) {
      for (int64_t shift : {1, 2, 4, 7}) {
        for (int64_t stride : {1, 2, 3}) {
          for (bool drop : {false, true}) {
            auto ds = Dataset::range(n).window(size, shift, stride, drop);
            EXPECT_EQ(ds.cardinality(), static_cast<int64_t>(collect(ds).size()))
                << "n=" << n << " size=" << size << " shift=" << shift << " stride=" << stride
                << " drop=" << drop;
          }
        }
      }
    }
  }
  EXPECT_EQ(Dataset::range(3).repeat().window(2).cardinality(), kInfiniteCardinality);
  EXPECT_EQ(Dataset::range(9).filter([](const Tensor&) { return true; }).window(2).cardinality(),
            kUnknownCardinality);
}

TEST(WindowTest, InvalidArguments) {
  EXPECT_THROW(Dataset::range(3).window(0), InvalidArgument);
  EXPECT_THROW(Dataset::range(3).window(2, 0), InvalidArgument);
  EXPECT_THROW(Dataset::range(3).window(2, 1, 0), InvalidArgument);
  EXPECT_THROW(Dataset::range(3).window(-1, 1, 1, true), InvalidArgument);
}

TEST(WindowTest, AnErrorTakesTheWindowsPlaceUnlessNoWindowTakesIt) {
  auto failing = Dataset::range(7).map([](const Tensor& x) {
    if (x.item<int64_t>() == 3) throw InvalidArgument("bad element three");
    return x;
  });
  Iterator it = failing.window(2, 3).make_iterator();
  EXPECT_EQ(window_values(*it.next()), (std::vector<int64_t>{0, 1}));
  try {
    it.next();
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("bad element three"), std::string::npos) << e.what();
  }
  EXPECT_EQ(window_values(*it.next()), (std::vector<int64_t>{6}));
  EXPECT_FALSE(it.next().has_value());
  // Element 3 lies between windows [0], [2], [4], [6], or beside a stride: dropped as tf.data.
  EXPECT_EQ(windows_of(failing.window(1, 2)), (Rows{{0}, {2}, {4}, {6}}));
  EXPECT_EQ(windows_of(failing.window(2, 4, 2)), (Rows{{0, 2}, {4, 6}}));
}

TEST(WindowTest, FromWindowRefusesOtherElements) {
  EXPECT_THROW(Dataset::from_window(I(3)), InvalidArgument);
  EXPECT_THROW(Dataset::from_window(
                   Element{Tensor::from_vector<int64_t>({2, 1}), Tensor::scalar(int64_t{1})}),
               InvalidArgument);
  const Element w = collect(Dataset::range(4).window(2))[0];
  EXPECT_THROW(Dataset::from_window(w, 1), InvalidArgument);
  const std::string message =
      error_message(Dataset::range(3).flat_map([](const Dataset& w) { return w; }));
  EXPECT_NE(message.find("is not a window element"), std::string::npos) << message;
  EXPECT_NE(message.find("at element 0"), std::string::npos) << message;
}

TEST(WindowTest, SavesAndRestores) {
  // More windows than the 64 outputs a consumer asks for at a time, so that states are saved
  // inside the stream.
  expect_resumes([] { return Dataset::range(300).window(4, 3, 2); });
  expect_resumes([] { return Dataset::range(400).window(3, 5, 1, true); });
  expect_resumes([] {
    return Dataset::range(23).window(5, 2, 1, true).flat_map([](const Dataset& w) {
      return w.batch(5);
    });
  });
}

// --- flat_map ----------------------------------------------------------------------------------

TEST(FlatMapTest, DocumentedExample) {
  // tf.data.Dataset.flat_map's docstring: [[1, 2, 3], [4, 5, 6], [7, 8, 9]] flat_mapped with
  // from_tensor_slices gives 1..9.
  auto ds =
      Dataset::from_tensor_slices(
          Element{Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{3, 3})})
          .flat_map([](const Tensor& row) { return Dataset::from_tensor_slices(Element{row}); });
  expect_dataset(ds, Is({1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(FlatMapTest, EmptyDatasetsAndEmptyInput) {
  auto ds = Dataset::range(5).flat_map([](const Tensor& x) {
    return Dataset::range(x.item<int64_t>() % 3);  // 0, 1, 2, 0, 1 elements.
  });
  expect_dataset(ds, Is({0, 0, 1, 0}));
  EXPECT_EQ(ds.cardinality(), kUnknownCardinality);
  EXPECT_EQ(
      Dataset::range(0).flat_map([](const Tensor&) { return Dataset::range(3); }).cardinality(), 0);
}

// A function that hands back no dataset is an error naming that function, in place of the element
// (or the window) it was called for.
TEST(FlatMapTest, AFunctionReturningNoDatasetIsAnErrorNamingIt) {
  const DatasetFunction none = [](const Element&) { return PlanPtr(); };
  EXPECT_NE(
      error_message(Dataset::range(3).flat_map_function(none))
          .find("the flat_map function returned no dataset [in stage 'flat_map' at element 0]"),
      std::string::npos);
  EXPECT_NE(error_message(Dataset::range(3).interleave_function(none, {}))
                .find("the interleave function returned no dataset [in stage 'interleave' at "
                      "element 0]"),
            std::string::npos);
  const ReduceFunction no_reduction = [](int64_t, const PlanPtr&) { return PlanPtr(); };
  const std::string grouped = error_message(Dataset::range(4).group_by_window_function(
      [](const Element& e) { return e[0].item<int64_t>() % 2; }, no_reduction,
      [](int64_t) { return int64_t{2}; }));
  EXPECT_NE(grouped.find("the group_by_window reduce function returned no dataset [in stage "
                         "'group_by_window' reducing the window of key 0]"),
            std::string::npos)
      << grouped;
}

TEST(FlatMapTest, ErrorsTakeTheElementsPlace) {
  auto ds = Dataset::range(4).flat_map([](const Tensor& x) {
    if (x.item<int64_t>() == 2) throw InvalidArgument("no dataset for two");
    return Dataset::from_tensors(Element{x}).repeat(2);
  });
  Iterator it = ds.make_iterator();
  std::vector<int64_t> got;
  std::string error;
  for (;;) {
    try {
      auto e = it.next();
      if (!e) break;
      got.push_back((*e)[0].item<int64_t>());
    } catch (const InvalidArgument& e) {
      error = e.what();
    }
  }
  EXPECT_EQ(got, (std::vector<int64_t>{0, 0, 1, 1, 3, 3}));
  EXPECT_NE(error.find("no dataset for two [in stage 'flat_map' at element 2]"), std::string::npos)
      << error;
}

TEST(FlatMapTest, InnerParallelStagesRunAndStopWithTheIterator) {
  auto inner = [](int64_t x) {
    return Dataset::range(x * 100, x * 100 + 50)
        .map([](const Tensor& t) { return t; }, {.num_parallel_calls = 2})
        .prefetch(4);
  };
  auto ds = Dataset::range(3).flat_map([&](const Tensor& x) { return inner(x.item<int64_t>()); });
  std::vector<int64_t> expected;
  for (int64_t x = 0; x < 3; ++x) {
    for (int64_t i = 0; i < 50; ++i) expected.push_back(x * 100 + i);
  }
  expect_dataset(ds, Is(expected));
  auto grouped = Dataset::range(40).group_by_window(
      [](const Tensor& x) { return x.item<int64_t>() % 2; },
      [](int64_t, const Dataset& w) { return w.prefetch(2); }, 10);
  for (int n : {1, 8}) {
    Iterator it = grouped.make_iterator(testing::threads(n));
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(it.next().has_value());
  }  // Destroyed while an inner prefetch runs.
}

TEST(FlatMapTest, SavesAndRestores) {
  expect_resumes([] {
    return Dataset::range(8).flat_map(
        [](const Tensor& x) { return Dataset::range(x.item<int64_t>() % 4).shuffle(3, 5); });
  });
}

// --- group_by_window ---------------------------------------------------------------------------

TEST(GroupByWindowTest, DocumentedExample) {
  // tf.data.Dataset.group_by_window's docstring: range(10), key x % 2, reduce batch(5), window 5.
  auto ds = Dataset::range(10).group_by_window(
      [](const Tensor& x) { return x.item<int64_t>() % 2; },
      [](int64_t, const Dataset& window) { return window.batch(5); }, 5);
  expect_dataset(ds, {V({0, 2, 4, 6, 8}), V({1, 3, 5, 7, 9})});
}

TEST(GroupByWindowTest, FullWindowsFirstThenOpenGroupsBySmallestKey) {
  // Key x % 3 with window 3: the group of key 0 fills at 6, key 1 at 7, key 2 at 8; 9..13 are
  // left in groups 0 (9, 12), 1 (10, 13) and 2 (11), flushed in key order at the end.
  auto ds =
      Dataset::range(14).group_by_window([](const Tensor& x) { return x.item<int64_t>() % 3; },
                                         [](int64_t key, const Dataset& window) {
                                           return window.batch(3).map([key](const Tensor& b) {
                                             return Element{Tensor::scalar<int64_t>(key), b};
                                           });
                                         },
                                         3);
  auto row = [](int64_t key, std::vector<int64_t> v) {
    return Element{Tensor::scalar<int64_t>(key), Tensor::from_vector<int64_t>(v)};
  };
  expect_dataset(ds, {row(0, {0, 3, 6}), row(1, {1, 4, 7}), row(2, {2, 5, 8}), row(0, {9, 12}),
                      row(1, {10, 13}), row(2, {11})});
  EXPECT_EQ(ds.cardinality(), kUnknownCardinality);
  EXPECT_EQ(Dataset::range(3)
                .repeat()
                .group_by_window([](const Tensor&) { return int64_t{0}; },
                                 [](int64_t, const Dataset& w) { return w; }, 2)
                .cardinality(),
            kInfiniteCardinality);
}

TEST(GroupByWindowTest, WindowSizeFunctionIsAskedOncePerKey) {
  auto calls = std::make_shared<std::map<int64_t, int>>();
  auto ds = Dataset::range(12).group_by_window(
      [](const Tensor& x) { return x.item<int64_t>() % 2; },
      [](int64_t, const Dataset& window) { return window.batch(10); },
      [calls](int64_t key) {
        ++(*calls)[key];
        return key == 0 ? int64_t{2} : int64_t{4};
      });
  EXPECT_EQ(collect(ds).size(), 5u);
  calls->clear();
  std::vector<Element> got = collect(ds);
  std::vector<Element> expected = {V({0, 2}), V({4, 6}), V({1, 3, 5, 7}), V({8, 10}), V({9, 11})};
  testing::expect_elements(got, expected, "window sizes by key");
  EXPECT_EQ(*calls, (std::map<int64_t, int>{{0, 1}, {1, 1}}));
}

TEST(GroupByWindowTest, Errors) {
  auto by_key = [](int64_t size) {
    return Dataset::range(4).group_by_window(
        [](const Tensor& x) {
          if (x.item<int64_t>() == 2) throw InvalidArgument("no key for two");
          return int64_t{0};
        },
        [](int64_t, const Dataset& w) { return w.batch(8); }, [size](int64_t) { return size; });
  };
  std::string message = error_message(by_key(2));
  EXPECT_NE(message.find("no key for two [in stage 'group_by_window' at element 2]"),
            std::string::npos)
      << message;
  message = error_message(by_key(0));
  EXPECT_NE(message.find("Window size must be greater than zero, but got 0."), std::string::npos)
      << message;
  message = error_message(Dataset::range(4).group_by_window(
      [](const Tensor&) { return int64_t{5}; },
      [](int64_t, const Dataset&) -> Dataset { throw InvalidArgument("cannot reduce"); }, 2));
  EXPECT_NE(message.find("cannot reduce [in stage 'group_by_window' reducing the window of key 5]"),
            std::string::npos)
      << message;
}

TEST(GroupByWindowTest, SavesAndRestores) {
  expect_resumes([] {
    return Dataset::range(40).shuffle(10, 3).group_by_window(
        [](const Tensor& x) { return x.item<int64_t>() % 4; },
        [](int64_t key, const Dataset& window) { return window.batch(key + 1); },
        [](int64_t key) { return 2 * key + 3; });
  });
}

// --- bucket_by_sequence_length -----------------------------------------------------------------

TEST(BucketBySequenceLengthTest, DocumentedExample) {
  // tf.data.Dataset.bucket_by_sequence_length's docstring: buckets [0, 3), [3, 5), [5, inf),
  // batch size 2 each.
  auto ds =
      sequences(
          {{0}, {1, 2, 3, 4}, {5, 6, 7}, {7, 8, 9, 10, 11}, {13, 14, 15, 16, 19, 20}, {21, 22}})
          .bucket_by_sequence_length(length_of, {3, 5}, {2, 2, 2});
  expect_dataset(
      ds, {matrix({{1, 2, 3, 4}, {5, 6, 7, 0}}),
           matrix({{7, 8, 9, 10, 11, 0}, {13, 14, 15, 16, 19, 20}}), matrix({{0, 0}, {21, 22}})});
}

TEST(BucketBySequenceLengthTest, PadToBucketBoundaryAddsNoExtraneousPadding) {
  // TF's bucket_by_sequence_length_test.testPadToBoundaryNoExtraneousPadding: lengths 1..10,
  // boundaries [3, 7, 11], batch size 2.
  Rows rows;
  for (int64_t n = 1; n <= 10; ++n) rows.push_back(std::vector<int64_t>(static_cast<size_t>(n), 1));
  auto ds = sequences(rows).bucket_by_sequence_length(length_of, {3, 7, 11}, {2, 2, 2, 2}, {}, {},
                                                      /*pad_to_bucket_boundary=*/true);
  expect_dataset(ds, {matrix({{1, 0}, {1, 1}}), matrix({{1, 1, 1, 0, 0, 0}, {1, 1, 1, 1, 0, 0}}),
                      matrix({{1, 1, 1, 1, 1, 0}, {1, 1, 1, 1, 1, 1}}),
                      matrix({{1, 1, 1, 1, 1, 1, 1, 0, 0, 0}, {1, 1, 1, 1, 1, 1, 1, 1, 0, 0}}),
                      matrix({{1, 1, 1, 1, 1, 1, 1, 1, 1, 0}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}})});
}

TEST(BucketBySequenceLengthTest, PadToBucketBoundaryRefusesLongElementsByName) {
  // As TF's testPadToBoundary: an element as long as the last boundary is an error.
  auto ds = sequences({{1}, {1, 1, 1, 1}, {1, 1}})
                .bucket_by_sequence_length(length_of, {2, 4}, {5, 5, 5}, {}, {},
                                           /*pad_to_bucket_boundary=*/true);
  const std::string message = error_message(ds);
  EXPECT_NE(message.find("elements must have length < max(bucket_boundaries) = 4; this element "
                         "has length 4 [in stage 'group_by_window' at element 1]"),
            std::string::npos)
      << message;
}

TEST(BucketBySequenceLengthTest, PaddedShapesValuesNoPaddingAndDropRemainder) {
  const Rows rows = {{1}, {2, 2}, {3, 3, 3}, {4}, {5, 5}, {6}};
  // padded_shapes [5] with padding value -1.
  auto padded = sequences(rows).bucket_by_sequence_length(length_of, {2}, {2, 2}, {{5}},
                                                          {Tensor::scalar<int64_t>(-1)});
  // The bucket of long elements fills first (at {3, 3, 3}), then the other; at the end the open
  // groups are flushed smallest bucket first.
  expect_dataset(padded, {matrix({{2, 2, -1, -1, -1}, {3, 3, 3, -1, -1}}),
                          matrix({{1, -1, -1, -1, -1}, {4, -1, -1, -1, -1}}),
                          matrix({{6, -1, -1, -1, -1}}), matrix({{5, 5, -1, -1, -1}})});
  // drop_remainder drops each bucket's last partial batch.
  auto dropped = sequences(rows).bucket_by_sequence_length(length_of, {2}, {2, 2}, {}, {}, false,
                                                           false, /*drop_remainder=*/true);
  expect_dataset(dropped, {matrix({{2, 2, 0}, {3, 3, 3}}), matrix({{1}, {4}})});
  // no_padding batches as they are: elements of one length per bucket here.
  auto unpadded = sequences({{1}, {2, 2}, {3}, {4, 4}})
                      .bucket_by_sequence_length(length_of, {2}, {2, 2}, {}, {}, false, true);
  expect_dataset(unpadded, {matrix({{1}, {3}}), matrix({{2, 2}, {4, 4}})});
}

TEST(BucketBySequenceLengthTest, InvalidArguments) {
  try {
    Dataset::range(3).bucket_by_sequence_length(length_of, {3, 5}, {2, 2});
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("`len(bucket_batch_sizes)` must equal "
                                         "`len(bucket_boundaries) + 1` but "
                                         "`len(bucket_batch_sizes)=2` and "
                                         "`len(bucket_boundaries)=2`."),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Dataset::range(3).bucket_by_sequence_length(length_of, {3}, {2, 0}),
               InvalidArgument);
}

TEST(BucketBySequenceLengthTest, SavesAndRestores) {
  expect_resumes([] {
    Rows rows;
    for (int64_t i = 0; i < 30; ++i) {
      rows.push_back(std::vector<int64_t>(static_cast<size_t>((i * 7) % 9 + 1), i));
    }
    return sequences(rows).bucket_by_sequence_length(length_of, {3, 6}, {2, 3, 4});
  });
}

// --- rejection_resample ------------------------------------------------------------------------

// n classes drawn from `dist` with a fixed seed.
std::vector<int64_t> draw_classes(const std::vector<double>& dist, int64_t n, uint64_t seed) {
  Random random(seed);
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) {
    double u = random.uniform_double();
    int64_t c = 0;
    while (c + 1 < static_cast<int64_t>(dist.size()) && u >= dist[static_cast<size_t>(c)]) {
      u -= dist[static_cast<size_t>(c)];
      ++c;
    }
    out.push_back(c);
  }
  return out;
}

// The fraction of each class among the outputs' class components.
std::vector<double> class_fractions(const Dataset& ds, size_t classes, size_t* outputs = nullptr) {
  std::vector<double> counts(classes);
  const std::vector<Element> all = collect(ds);
  for (const Element& e : all) {
    EXPECT_EQ(e[0].item<int64_t>(), e[1].item<int64_t>()) << "(class, element) pairs";
    counts[static_cast<size_t>(e[0].item<int64_t>())] += 1;
  }
  for (double& c : counts) c /= static_cast<double>(all.size());
  if (outputs) *outputs = all.size();
  return counts;
}

Dataset classes_dataset(const std::vector<int64_t>& classes) {
  return Dataset::from_tensor_slices(Element{Tensor::from_vector<int64_t>(classes)});
}

TEST(RejectionResampleTest, DocumentedExample) {
  // tf.data.Dataset.rejection_resample's docstring: 1000 elements drawn from [0.6, 0.4],
  // resampled to [0.5, 0.5] with initial_dist given: zero and one are then about 0.5 each.
  const std::vector<int64_t> elems = draw_classes({0.6, 0.4}, 1000, 11);
  const std::vector<double> before =
      class_fractions(classes_dataset(elems).map([](const Tensor& x) {
        return Element{x, x};
      }),
                      2);
  EXPECT_NEAR(before[0], 0.6, 0.04);
  size_t outputs = 0;
  const std::vector<double> after = class_fractions(
      classes_dataset(elems).rejection_resample([](const Tensor& x) { return x.item<int64_t>(); },
                                                {0.5, 0.5}, std::vector<double>{0.6, 0.4}, 3),
      2, &outputs);
  EXPECT_NEAR(after[0], 0.5, 0.05);
  EXPECT_NEAR(after[1], 0.5, 0.05);
  EXPECT_GT(outputs, 600u);  // About 800: the mixture keeps 5/6 of the outputs as they come.
}

TEST(RejectionResampleTest, OutputApproachesTheTargetDistribution) {
  const std::vector<double> initial = {0.5, 0.2, 0.2, 0.1};
  const std::vector<double> target = {0.25, 0.25, 0.25, 0.25};
  const std::vector<int64_t> elems = draw_classes(initial, 5000, 5);
  auto class_of = [](const Tensor& x) { return x.item<int64_t>(); };
  for (bool known : {true, false}) {
    size_t outputs = 0;
    const std::vector<double> got =
        class_fractions(classes_dataset(elems).rejection_resample(
                            class_of, target,
                            known ? std::optional<std::vector<double>>(initial) : std::nullopt, 17),
                        4, &outputs);
    for (size_t c = 0; c < 4; ++c) {
      EXPECT_NEAR(got[c], target[c], 0.04) << "class " << c << (known ? " known" : " estimated");
    }
    // Each output takes 2.5 inputs on average: about 2000 outputs, each input used once.
    EXPECT_GT(outputs, 1500u);
    EXPECT_LT(outputs, 2500u);
  }
  // A class the target excludes never comes out.
  const std::vector<double> without_two = class_fractions(
      classes_dataset(elems).rejection_resample(class_of, {0.5, 0.5, 0, 0}, initial, 2), 4);
  EXPECT_EQ(without_two[2], 0);
  EXPECT_EQ(without_two[3], 0);
  EXPECT_NEAR(without_two[0], 0.5, 0.04);
}

TEST(RejectionResampleTest, DeterministicForASeed) {
  const std::vector<int64_t> elems = draw_classes({0.7, 0.2, 0.1}, 600, 9);
  auto make = [&](uint64_t seed, bool known) {
    return classes_dataset(elems).rejection_resample(
        [](const Tensor& x) { return x.item<int64_t>(); }, {0.2, 0.3, 0.5},
        known ? std::optional<std::vector<double>>({0.7, 0.2, 0.1}) : std::nullopt, seed);
  };
  for (bool known : {true, false}) {
    const std::vector<int64_t> first = ints(make(4, known));
    EXPECT_EQ(ints(make(4, known)), first);
    EXPECT_EQ(ints(make(4, known), testing::threads(8)), first);
    EXPECT_NE(ints(make(5, known)), first);
  }
  // Without a seed, Options::seed decides.
  auto unseeded = [&] {
    return classes_dataset(elems).rejection_resample(
        [](const Tensor& x) { return x.item<int64_t>(); }, {0.2, 0.3, 0.5});
  };
  Options seeded;
  seeded.seed = 12;
  EXPECT_EQ(ints(unseeded(), seeded), ints(unseeded(), seeded));
}

TEST(RejectionResampleTest, KeepsNamesAndReportsBadClasses) {
  auto named =
      Dataset::from_tensor_slices(Element{{"label", Tensor::from_vector<int64_t>({0, 1, 1, 0})},
                                          {"text", Tensor::from_strings({"a", "b", "c", "d"})}});
  const std::vector<Element> got =
      collect(named.rejection_resample([](const Element& e) { return e["label"].item<int64_t>(); },
                                       {0.5, 0.5}, std::vector<double>{0.5, 0.5}, 1));
  ASSERT_EQ(got.size(), 4u);  // The input already has the target distribution: all, in order.
  EXPECT_TRUE(got[1].equals(Element{{"class", Tensor::scalar<int64_t>(1)},
                                    {"label", Tensor::scalar<int64_t>(1)},
                                    {"text", Tensor::scalar("b")}}))
      << got[1];
  EXPECT_EQ(named
                .rejection_resample([](const Element&) { return int64_t{0}; }, {1, 1},
                                    std::vector<double>{1, 1})
                .cardinality(),
            4);
  const std::string message = error_message(classes_dataset({0, 1, 3}).rejection_resample(
      [](const Tensor& x) { return x.item<int64_t>(); }, {0.5, 0.5}, std::nullopt, 1));
  EXPECT_NE(message.find("class_func returned 3; classes are 0 to 1"), std::string::npos)
      << message;
  EXPECT_NE(message.find("[in stage 'rejection_resample' at element 2]"), std::string::npos)
      << message;
  auto class_of = [](const Tensor& x) { return x.item<int64_t>(); };
  EXPECT_THROW(Dataset::range(3).rejection_resample(class_of, {}), InvalidArgument);
  EXPECT_THROW(Dataset::range(3).rejection_resample(class_of, {0.5, -0.5}), InvalidArgument);
  EXPECT_THROW(Dataset::range(3).rejection_resample(class_of, {0, 0}), InvalidArgument);
  EXPECT_THROW(Dataset::range(3).rejection_resample(class_of, {0.5, 0.5}, std::vector<double>{1.0}),
               InvalidArgument);
}

TEST(RejectionResampleTest, SavesAndRestores) {
  // About 330 outputs: more than a consumer's chunk of 64, so states are saved mid-stream.
  const std::vector<int64_t> elems = draw_classes({0.6, 0.3, 0.1}, 2000, 21);
  for (bool known : {true, false}) {
    expect_resumes([&elems, known] {
      return classes_dataset(elems).rejection_resample(
          [](const Tensor& x) { return x.item<int64_t>(); }, {0.1, 0.3, 0.6},
          known ? std::optional<std::vector<double>>({0.6, 0.3, 0.1}) : std::nullopt, 8);
    });
  }
  // Unseeded: the stage's seed comes from Options::seed (expect_resumes sets one).
  expect_resumes([&elems] {
    return classes_dataset(elems).rejection_resample(
        [](const Tensor& x) { return x.item<int64_t>(); }, {0.3, 0.3, 0.4});
  });
}

}  // namespace
}  // namespace sluice
