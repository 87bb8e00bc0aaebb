// Dataset: the user-facing handle of a tf.data-style input pipeline. A Dataset is an immutable
// value — a cheap handle to a plan node — and every transformation returns a new one; nothing
// runs until an iterator is made. Names and argument order follow tf.data.
//
//   auto ds = Dataset::range(1000)
//                 .map([](const Tensor& x) { return Tensor::scalar(x.item<int64_t>() * 2); },
//                      {.num_parallel_calls = kAutotune})
//                 .shuffle(100, 42)
//                 .batch(32)
//                 .prefetch(kAutotune);
//   for (const Element& batch : ds) { ... }
//
// Arguments are checked when the dataset is built (InvalidArgument); errors of the data itself
// arrive from Iterator::next() at the place of the element concerned.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/core/element.h"
#include "sluice/dataset/iterator.h"
#include "sluice/dataset/options.h"
#include "sluice/graph/batching.h"
#include "sluice/graph/options.h"
#include "sluice/graph/plan.h"
#include "sluice/graph/stages/group_by_window.h"
#include "sluice/graph/stages/interleave.h"
#include "sluice/graph/stages/map.h"
#include "sluice/graph/stages/rejection_resample.h"
#include "sluice/graph/stages/scan.h"
#include "sluice/graph/stages/sources.h"

namespace sluice {

struct MapOptions {
  // 0: run sequentially in the consuming thread; N > 0 or kAutotune: N parallel calls on the
  // iterator's arena.
  int64_t num_parallel_calls = 0;
  // Unset: Options::deterministic (true by default): outputs in input order.
  std::optional<bool> deterministic;
  // Seed of the generator a function taking (Element, const ElementContext&) gets.
  std::optional<uint64_t> seed;
};

struct InterleaveOptions {
  int64_t cycle_length = kAutotune;  // kAutotune: Options::autotune.cpu_budget.
  int64_t block_length = 1;
  int64_t num_parallel_calls = 0;  // Non-zero: pull every open dataset ahead in the background.
};

// Dataset::save's shard_func: the shard (>= 0) an element goes to.
using ShardFunction = std::function<int64_t(const Element&)>;

class Dataset {
 public:
  // --- Sources -----------------------------------------------------------------------------
  static Dataset range(int64_t stop) { return range(0, stop, 1); }
  static Dataset range(int64_t start, int64_t stop, int64_t step = 1);
  static Dataset from_tensors(Element element);
  // Element i holds row i of every component (and record i of the components' origin, if set).
  static Dataset from_tensor_slices(Element components);
  static Dataset from_generator(std::function<Generator()> make_generator);
  // A generator that can save and restore its position (graph/stages/sources.h), so that
  // iterators over it can be saved; a plain Generator cannot (Iterator::save: Unimplemented).
  static Dataset from_generator(std::function<StatefulGenerator()> make_generator);
  // tf.data.Dataset.list_files: the matches of every glob pattern (formats/glob.h; `**` is
  // sluice's addition), concatenated and sorted, then — when `shuffle` (tf.data's default) —
  // shuffled with a buffer holding all of them, seeded by `seed`, in a new order for each
  // iterator and epoch (the same sequence of orders for the same seed). The patterns are expanded
  // once, when the dataset is built: files created later are not seen. Its saved state is the
  // shuffle's indices into the list (and a digest of the list, in the plan signature, so that a
  // state is refused once the files matched differ). Throws InvalidArgument "No files matched
  // pattern: <patterns joined by ', '>" when nothing matches, and for an empty pattern list.
  static Dataset list_files(const std::vector<std::string>& patterns, bool shuffle = true,
                            std::optional<uint64_t> seed = std::nullopt);
  static Dataset list_files(const std::string& pattern, bool shuffle = true,
                            std::optional<uint64_t> seed = std::nullopt) {
    return list_files(std::vector<std::string>{pattern}, shuffle, seed);
  }
  static Dataset zip(std::vector<Dataset> datasets);
  // tf.data.Dataset.load: the elements Dataset::save wrote to `path` (dataset/snapshot.h), shard
  // after shard in index order, each shard in the order saved. The metadata is read now (NotFound
  // when it is missing, DataLoss when corrupt), so the cardinality is known; numeric tensors
  // point into the mapped files (zero-copy) unless the files are compressed.
  static Dataset load(const std::string& path);
  // A dataset over any plan node (how formats/ readers become datasets).
  static Dataset from_plan(PlanPtr plan) { return Dataset(std::move(plan)); }

  // --- Transformations ---------------------------------------------------------------------
  // f: Element(Element), Element(Element, const ElementContext&) or, for one-component
  // elements, Tensor or Element(const Tensor&). Its exceptions become errors of the element,
  // naming its index and where it was read (its origin, which a result without one inherits).
  template <class F>
  Dataset map(F f, MapOptions options = {}) const {
    return map_function(to_map_function(std::move(f)), options);
  }
  // f as for map(); fused map then batch (tf.data.experimental.map_and_batch).
  template <class F>
  Dataset map_and_batch(F f, int64_t batch_size, bool drop_remainder = false,
                        MapOptions options = {}) const {
    return map_and_batch_function(to_map_function(std::move(f)), batch_size, drop_remainder,
                                  options);
  }
  // predicate: bool(const Element&), bool(const Tensor&) or bool(const Element&, const
  // ElementContext&).
  template <class P>
  Dataset filter(P predicate) const {
    return filter_function(to_predicate(std::move(predicate)));
  }
  // f: Dataset(const Element&) or Dataset(const Tensor&).
  template <class F>
  Dataset interleave(F f, InterleaveOptions options = {}) const {
    return interleave_function(to_dataset_function(std::move(f)), options);
  }

  Dataset batch(int64_t batch_size, bool drop_remainder = false) const;
  Dataset padded_batch(int64_t batch_size, PaddingSpec padding = {},
                       bool drop_remainder = false) const;
  Dataset unbatch() const;
  Dataset shuffle(int64_t buffer_size, std::optional<uint64_t> seed = std::nullopt,
                  bool reshuffle_each_iteration = true) const;
  Dataset repeat(int64_t count = -1) const;
  Dataset shuffle_and_repeat(int64_t buffer_size, int64_t count = -1,
                             std::optional<uint64_t> seed = std::nullopt) const;
  Dataset prefetch(int64_t buffer_size) const;
  Dataset cache(std::string filename = "") const;
  // tf.data.Dataset.snapshot: the first pass writes the elements under `path` while passing them
  // on; later passes, iterators and processes read them from there (mapped, zero-copy). Keyed on
  // the pipeline's fingerprint (dataset/snapshot.h says what changes it). compression: "",
  // "ZLIB" or "GZIP" ("AUTO": none).
  Dataset snapshot(const std::string& path, const std::string& compression = "") const;
  Dataset take(int64_t count) const;
  Dataset skip(int64_t count) const;
  Dataset shard(int64_t num_shards, int64_t index) const;
  Dataset zip(const Dataset& other) const { return zip({*this, other}); }
  Dataset concatenate(const Dataset& other) const;
  Dataset enumerate(int64_t start = 0) const;
  Dataset ignore_errors(bool log_warning = false) const;
  Dataset with_options(const Options& options) const;

  Dataset map_function(MapFunction f, const MapOptions& options) const;
  Dataset map_and_batch_function(MapFunction f, int64_t batch_size, bool drop_remainder,
                                 const MapOptions& options) const;
  Dataset filter_function(Predicate predicate) const;
  Dataset interleave_function(DatasetFunction f, const InterleaveOptions& options) const;

  // --- Choosing, scanning, reducing (tf.data's names and arguments) ------------------------
  // tf.data.Dataset.sample_from_datasets: each element the next of datasets[k], k drawn with
  // probability weights[k] / sum(weights) (uniform when no weights); a dataset that ends is
  // dropped and the others' weights renormalised, unless stop_on_empty_dataset, which ends the
  // whole. The same order for a seed at any thread count (graph/stages/sample_from_datasets.h).
  static Dataset sample_from_datasets(std::vector<Dataset> datasets,
                                      std::optional<std::vector<double>> weights = std::nullopt,
                                      std::optional<uint64_t> seed = std::nullopt,
                                      bool stop_on_empty_dataset = false,
                                      bool rerandomize_each_iteration = false);
  // tf.data.Dataset.choose_from_datasets: for each int64 scalar k of choice_dataset, the next
  // element of datasets[k]; a k out of range is an InvalidArgument error naming the choice
  // element (graph/stages/choose_from_datasets.h).
  static Dataset choose_from_datasets(std::vector<Dataset> datasets, const Dataset& choice_dataset,
                                      bool stop_on_empty_dataset = true);
  // tf.data.Dataset.random: infinite int64 scalars in [0, 2^32), the same for a seed
  // (graph/stages/random.h).
  static Dataset random(std::optional<uint64_t> seed = std::nullopt,
                        bool rerandomize_each_iteration = false);
  // tf.data.Dataset.counter: start, start + step, start + 2 * step, ... forever, as int32 or
  // int64 scalars.
  static Dataset counter(int64_t start = 0, int64_t step = 1, DType dtype = DType::kInt64);

  // scan_func: a pair (new state, output) of Elements or Tensors from (Element state, Element
  // element) or, for one-component states and elements, from (const Tensor&, const Tensor&).
  // The state is saved with the iterator (graph/stages/scan.h).
  template <class F>
  Dataset scan(Element initial_state, F scan_func) const {
    if constexpr (std::is_invocable_v<F&, Element, Element>) {
      return scan_function(std::move(initial_state),
                           [f = std::move(scan_func)](Element state, Element element) mutable {
                             auto [new_state, output] = f(std::move(state), std::move(element));
                             return std::pair<Element, Element>(to_element(std::move(new_state)),
                                                                to_element(std::move(output)));
                           });
    } else {
      static_assert(std::is_invocable_v<F&, const Tensor&, const Tensor&>,
                    "scan takes pair(state, output)(Element, Element) or (const Tensor&, const "
                    "Tensor&)");
      return scan_function(std::move(initial_state), [f = std::move(scan_func)](
                                                         Element state, Element element) mutable {
        auto [new_state, output] = f(only_component(state), only_component(element));
        return std::pair<Element, Element>(to_element(std::move(new_state)),
                                           to_element(std::move(output)));
      });
    }
  }
  template <class F>
  Dataset scan(Tensor initial_state, F scan_func) const {
    return scan(Element{std::move(initial_state)}, std::move(scan_func));
  }
  // Drops repeated elements, which must be int32, int64 or string scalars
  // (graph/stages/unique.h).
  Dataset unique() const;
  // predicate as for filter(); the elements before the first it rejects.
  template <class P>
  Dataset take_while(P predicate) const {
    return take_while_function(to_predicate(std::move(predicate)));
  }
  // Runs an iterator to the end and folds every element into the state with reduce_func:
  // Element(Element state, Element element) or Tensor(const Tensor&, const Tensor&). Its
  // exceptions, and the dataset's errors, are thrown naming the element. Throws InvalidArgument
  // for an infinite dataset (which would never return).
  template <class F>
  Element reduce(Element initial_state, F reduce_func) const {
    if constexpr (std::is_invocable_v<F&, Element, Element>) {
      return reduce_function(std::move(initial_state),
                             [f = std::move(reduce_func)](Element state, Element element) mutable {
                               return to_element(f(std::move(state), std::move(element)));
                             });
    } else {
      static_assert(std::is_invocable_v<F&, const Tensor&, const Tensor&>,
                    "reduce takes Element(Element, Element) or Tensor(const Tensor&, const "
                    "Tensor&)");
      return reduce_function(std::move(initial_state),
                             [f = std::move(reduce_func)](Element state, Element element) mutable {
                               return to_element(f(only_component(state), only_component(element)));
                             });
    }
  }
  template <class F>
  Tensor reduce(Tensor initial_state, F reduce_func) const {
    return only_component(reduce(Element{std::move(initial_state)}, std::move(reduce_func)));
  }
  // The dataset's only element. Throws InvalidArgument "Dataset was empty." or "Dataset had more
  // than one element." as tf.data, and the element's own error.
  Element get_single_element() const;
  // transformation_func(*this): Dataset(Dataset).
  template <class F>
  Dataset apply(F transformation_func) const {
    static_assert(std::is_invocable_r_v<Dataset, F&, const Dataset&>,
                  "apply takes Dataset(const Dataset&)");
    return transformation_func(*this);
  }
  Dataset scan_function(Element initial_state, ScanFunction scan_func) const;
  Dataset take_while_function(Predicate predicate) const;
  Element reduce_function(Element initial_state,
                          std::function<Element(Element, Element)> reduce_func) const;

  // --- Windows, grouping and resampling (dataset/windowing.cc) -------------------------------
  // tf.data.Dataset.flat_map: the elements of f(element) for each element, in order. f as
  // interleave's, or Dataset(const Dataset&) over window elements (each given as from_window's
  // dataset), so that tf.data's pattern reads
  //   ds.window(3, 1, 1, true).flat_map([](const Dataset& w) { return w.batch(3); })
  template <class F>
  Dataset flat_map(F f) const {
    if constexpr (std::is_invocable_r_v<Dataset, F&, const Dataset&>) {
      return flat_map_function(
          [f = std::move(f)](const Element& e) mutable { return f(from_window(e)).plan(); });
    } else {
      return flat_map_function(to_dataset_function(std::move(f)));
    }
  }
  // tf.data.Dataset.window(size, shift=size, stride=1, drop_remainder=False). Each element is a
  // window element: the window's elements themselves (sharing their buffers), which
  // from_window() and flat_map() turn into a dataset. sluice's elements are tuples of tensors,
  // with no dataset type for tf.data's one-dataset-per-component windows; a window element keeps
  // a window in one value, of elements of any shapes. Its layout is graph/stages/window.h's.
  Dataset window(int64_t size, std::optional<int64_t> shift = std::nullopt, int64_t stride = 1,
                 bool drop_remainder = false) const;
  // The elements a window element holds, as a dataset; with `component`, that component of each
  // (tf.data's dataset of one component of a window). Throws InvalidArgument when `window` is not
  // a window element, or has no such component.
  static Dataset from_window(const Element& window);
  static Dataset from_window(const Element& window, size_t component);

  // tf.data.Dataset.group_by_window (graph/stages/group_by_window.h). key_func: int64_t(const
  // Element&) or int64_t(const Tensor&); reduce_func: Dataset(int64_t key, const Dataset& window);
  // then window_size, or window_size_func: int64_t(int64_t key).
  template <class K, class R>
  Dataset group_by_window(K key_func, R reduce_func, int64_t window_size) const {
    return group_by_window_function(to_int64_function(std::move(key_func)),
                                    to_reduce_function(std::move(reduce_func)),
                                    [window_size](int64_t) { return window_size; });
  }
  template <class K, class R, class W>
  requires std::is_invocable_r_v<int64_t, W&, int64_t> Dataset group_by_window(K key_func,
                                                                               R reduce_func,
                                                                               W window_size_func)
  const {
    return group_by_window_function(to_int64_function(std::move(key_func)),
                                    to_reduce_function(std::move(reduce_func)),
                                    WindowSizeFunction(std::move(window_size_func)));
  }
  // tf.data.Dataset.bucket_by_sequence_length: group_by_window on the bucket of each element's
  // length (bucket i holds lengths in [bucket_boundaries[i-1], bucket_boundaries[i])), each
  // window padded_batch'ed (batch'ed with no_padding) by its bucket's batch size.
  // element_length_func: int64_t(const Element&) or int64_t(const Tensor&). padded_shapes and
  // padding_values are padded_batch's (PaddingSpec). pad_to_bucket_boundary pads the unknown
  // dimensions (-1 in padded_shapes; without padded_shapes every dimension, sluice knowing no
  // static shapes) to the bucket's boundary - 1; an element of length >= the last boundary is
  // then an error in its place. Throws InvalidArgument unless bucket_batch_sizes has
  // len(bucket_boundaries) + 1 entries, all positive.
  template <class L>
  Dataset bucket_by_sequence_length(L element_length_func, std::vector<int64_t> bucket_boundaries,
                                    std::vector<int64_t> bucket_batch_sizes,
                                    std::vector<std::vector<int64_t>> padded_shapes = {},
                                    std::vector<Tensor> padding_values = {},
                                    bool pad_to_bucket_boundary = false, bool no_padding = false,
                                    bool drop_remainder = false) const {
    return bucket_by_sequence_length_function(
        to_int64_function(std::move(element_length_func)), std::move(bucket_boundaries),
        std::move(bucket_batch_sizes),
        PaddingSpec{std::move(padded_shapes), std::move(padding_values)}, pad_to_bucket_boundary,
        no_padding, drop_remainder);
  }
  // tf.data.Dataset.rejection_resample (graph/stages/rejection_resample.h): (class, element)
  // pairs whose classes follow target_dist. class_func: int64_t(const Element&) or
  // int64_t(const Tensor&), in [0, target_dist.size()). Without initial_dist the input's class
  // distribution is estimated as it is read.
  template <class C>
  Dataset rejection_resample(C class_func, std::vector<double> target_dist,
                             std::optional<std::vector<double>> initial_dist = std::nullopt,
                             std::optional<uint64_t> seed = std::nullopt) const {
    return rejection_resample_function(to_int64_function(std::move(class_func)),
                                       std::move(target_dist), std::move(initial_dist), seed);
  }

  Dataset flat_map_function(DatasetFunction f) const;
  Dataset group_by_window_function(KeyFunction key_func, ReduceFunction reduce_func,
                                   WindowSizeFunction window_size_func) const;
  Dataset bucket_by_sequence_length_function(KeyFunction element_length_func,
                                             std::vector<int64_t> bucket_boundaries,
                                             std::vector<int64_t> bucket_batch_sizes,
                                             PaddingSpec padding, bool pad_to_bucket_boundary,
                                             bool no_padding, bool drop_remainder) const;
  Dataset rejection_resample_function(ClassFunction class_func, std::vector<double> target_dist,
                                      std::optional<std::vector<double>> initial_dist,
                                      std::optional<uint64_t> seed) const;

 private:
  template <class F>
  static std::function<int64_t(const Element&)> to_int64_function(F f) {
    if constexpr (std::is_invocable_r_v<int64_t, F&, const Element&>) {
      return [f = std::move(f)](const Element& e) mutable -> int64_t { return f(e); };
    } else {
      static_assert(std::is_invocable_r_v<int64_t, F&, const Tensor&>,
                    "takes int64_t(const Element&) or int64_t(const Tensor&)");
      return
          [f = std::move(f)](const Element& e) mutable -> int64_t { return f(only_component(e)); };
    }
  }
  template <class R>
  static ReduceFunction to_reduce_function(R f) {
    static_assert(std::is_invocable_r_v<Dataset, R&, int64_t, const Dataset&>,
                  "group_by_window's reduce_func takes Dataset(int64_t key, const Dataset&)");
    return [f = std::move(f)](int64_t key, PlanPtr window) mutable {
      return f(key, Dataset(std::move(window))).plan();
    };
  }

 public:
  // --- Running ------------------------------------------------------------------------------
  // Number of elements, kInfiniteCardinality or kUnknownCardinality (tf.data's rules).
  int64_t cardinality() const { return plan_->cardinality(); }
  // The size every element is known to have along its first dimension, before running anything
  // (tf.data's static batch dimension: element_spec's shape[0] is not None): the batch_size of the
  // last batch, padded_batch or map_and_batch stage when it drops the remainder. Stages that pass
  // elements on whole keep it (prefetch, repeat, take, skip, shuffle, shard, cache, filter,
  // ignore_errors, with_options, enumerate), and so does map, whose function is taken to keep
  // the leading dimension (sluice cannot trace it as TensorFlow does); zip and concatenate keep
  // it when all their inputs agree. nullopt otherwise: a partial last batch is possible, or the
  // elements are not batches.
  std::optional<int64_t> static_batch_size() const;
  Iterator make_iterator(const Options& options = {}) const;
  // tf.data.Dataset.save: runs the dataset once and writes its elements to the folder `path`
  // (dataset/snapshot.h), which appears whole once all is written, replacing a dataset saved
  // there before. compression: "", "ZLIB" or "GZIP"; shard_func: the shard of each element
  // (default: all in shard 0). An error of an element fails the save and leaves `path` as it was.
  void save(const std::string& path, const std::string& compression = "",
            const ShardFunction& shard_func = {}) const;
  // Whether its iterators can save their position (Iterator::save): every stage can but
  // from_generator over a plain Generator. Datasets an interleave function makes at run time are
  // not known here; Iterator::save names such a stage if it cannot.
  bool is_checkpointable() const;

  // Range-for support: `for (const Element& e : ds)` makes one iterator for the loop.
  class LoopIterator {
   public:
    using value_type = Element;
    using difference_type = std::ptrdiff_t;
    const Element& operator*() const { return *current_; }
    const Element* operator->() const { return &*current_; }
    LoopIterator& operator++() {
      current_ = iterator_->next();
      return *this;
    }
    bool operator==(std::default_sentinel_t) const { return !current_.has_value(); }

   private:
    friend class Dataset;
    explicit LoopIterator(Iterator iterator)
        : iterator_(std::make_shared<Iterator>(std::move(iterator))), current_(iterator_->next()) {}
    std::shared_ptr<Iterator> iterator_;
    std::optional<Element> current_;
  };
  LoopIterator begin() const { return LoopIterator(make_iterator()); }
  std::default_sentinel_t end() const { return {}; }

  const PlanPtr& plan() const { return plan_; }

 private:
  explicit Dataset(PlanPtr plan) : plan_(std::move(plan)) {}

  static Element to_element(Element e) { return e; }
  static Element to_element(Tensor t) { return Element(std::move(t)); }
  static const Tensor& only_component(const Element& e);

  template <class F>
  static MapFunction to_map_function(F f) {
    if constexpr (std::is_invocable_v<F&, Element, const ElementContext&>) {
      return [f = std::move(f)](Element e, const ElementContext& c) mutable {
        return to_element(f(std::move(e), c));
      };
    } else if constexpr (std::is_invocable_v<F&, Element>) {
      return [f = std::move(f)](Element e, const ElementContext&) mutable {
        return to_element(f(std::move(e)));
      };
    } else {
      static_assert(std::is_invocable_v<F&, const Tensor&>,
                    "map takes Element(Element[, const ElementContext&]) or f(const Tensor&)");
      return [f = std::move(f)](Element e, const ElementContext&) mutable {
        return to_element(f(only_component(e)));
      };
    }
  }

  template <class P>
  static Predicate to_predicate(P p) {
    if constexpr (std::is_invocable_r_v<bool, P&, const Element&, const ElementContext&>) {
      return p;
    } else if constexpr (std::is_invocable_r_v<bool, P&, const Element&>) {
      return [p = std::move(p)](const Element& e, const ElementContext&) mutable { return p(e); };
    } else {
      static_assert(
          std::is_invocable_r_v<bool, P&, const Tensor&>,
          "filter takes bool(const Element&[, const ElementContext&]) or bool(const Tensor&)");
      return [p = std::move(p)](const Element& e, const ElementContext&) mutable {
        return p(only_component(e));
      };
    }
  }

  template <class F>
  static DatasetFunction to_dataset_function(F f) {
    if constexpr (std::is_invocable_r_v<Dataset, F&, const Element&>) {
      return [f = std::move(f)](const Element& e) mutable { return f(e).plan(); };
    } else {
      static_assert(std::is_invocable_r_v<Dataset, F&, const Tensor&>,
                    "interleave takes Dataset(const Element&) or Dataset(const Tensor&)");
      return [f = std::move(f)](const Element& e) mutable { return f(only_component(e)).plan(); };
    }
  }

  PlanPtr plan_;
};

}  // namespace sluice
