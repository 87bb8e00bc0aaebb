// AUTOTUNE at run time (graph/autotune.h): the RAM budget bounds the tuned buffers, the tuner
// gives threads to the stage the consumer waits on and none to a cheap one, tuned values change
// neither the output nor what a saved state resumes to, and autotune=false keeps AUTOTUNE fixed.
#include <chrono>
#include <numeric>
#include <thread>

#include "sluice/core/errors.h"
#include "tests/dataset/testing.h"

namespace sluice {
namespace {

using testing::ints;
using testing::range_vector;

Options tuned(int threads, std::optional<int> cpu_budget = std::nullopt,
              std::optional<int64_t> ram_budget = std::nullopt) {
  Options o;
  o.threads = threads;
  o.autotune.cpu_budget = cpu_budget;
  o.autotune.ram_budget = ram_budget;
  return o;
}

// The row of the stage `name` at `depth` (0: the output).
StageStatsSnapshot stage(const Iterator& it, const std::string& name, int depth) {
  for (const StageStatsSnapshot& s : it.stats()) {
    if (s.name == name && s.depth == depth) return s;
  }
  ADD_FAILURE() << "no stage " << name << " at depth " << depth << "\n" << it.stats_table();
  return {};
}

// Element i as a tensor of kWords int64 values, all i: 64 KiB each.
constexpr int64_t kWords = 8192;
constexpr int64_t kElementBytes = kWords * 8;
Tensor big(const Tensor& x) {
  return Tensor::from_vector(std::vector<int64_t>(kWords, x.item<int64_t>()));
}

// A small budget holds the tuned buffers of large elements under it: each of the two tuned
// stages (the parallel map and the prefetch) holds at most half, whatever their tasks' sizes.
// Without the budget the map's tasks alone (about 1 ms of work each) hold megabytes.
TEST(AutotuneTest, BufferedBytesStayWithinTheRamBudget) {
  constexpr int64_t kBudget = 16 * kElementBytes;  // 1 MiB.
  const Dataset ds =
      Dataset::range(400).map(big, {.num_parallel_calls = kAutotune}).prefetch(kAutotune);
  Iterator it = ds.make_iterator(tuned(4, 4, kBudget));
  for (int64_t i = 0; i < 400; ++i) {
    auto e = it.next();
    ASSERT_TRUE(e.has_value()) << i;
    const Tensor& t = (*e)[0];
    ASSERT_EQ(t.num_elements(), kWords);
    ASSERT_EQ(t.data<int64_t>()[0], i);
    ASSERT_EQ(t.data<int64_t>()[kWords - 1], i);
    // A consumer slower than the producer at first lets the buffers fill up.
    if (i < 100) std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  EXPECT_FALSE(it.next().has_value());
  int64_t peaks = 0;
  for (const StageStatsSnapshot& s : it.stats()) peaks += s.peak_buffered_bytes;
  EXPECT_GT(stage(it, "map", 1).peak_buffered_bytes, 0) << it.stats_table();
  EXPECT_GT(stage(it, "prefetch", 0).peak_buffered_bytes, 0) << it.stats_table();
  EXPECT_LE(peaks, kBudget) << it.stats_table();
  EXPECT_LE(stage(it, "prefetch", 0).buffer_limit, kBudget / 2 / kElementBytes) << it.stats_table();
  // Everything handed out: nothing held any more.
  for (const StageStatsSnapshot& s : it.stats()) EXPECT_EQ(s.buffered_bytes, 0) << s.name;
}

// A map that sleeps keeps its one thread busy while the consumer waits: the tuner gives it more,
// up to the CPU budget. The map before it costs nothing and keeps its one thread. (Sleeping,
// rather than computing, makes the slow map slow on any machine under any load; 3 ms keeps the
// cheap map's share of the time far below half a thread even where a sanitizer makes it costly.)
TEST(AutotuneTest, TheTunerRaisesASlowMapAndKeepsACheapOneAtOne) {
  Options options = tuned(4, 4);
  options.static_optimizations = false;  // Keep the two maps apart.
  const Dataset ds = Dataset::range(400)
                         .map([](const Tensor& x) { return x; }, {.num_parallel_calls = kAutotune})
                         .map(
                             [](const Tensor& x) {
                               std::this_thread::sleep_for(std::chrono::milliseconds(3));
                               return Tensor::scalar(x.item<int64_t>() * 2);
                             },
                             {.num_parallel_calls = kAutotune});
  Iterator it = ds.make_iterator(options);
  for (int64_t i = 0; i < 400; ++i) {
    auto e = it.next();
    ASSERT_TRUE(e.has_value());
    ASSERT_EQ((*e)[0].item<int64_t>(), 2 * i);
  }
  EXPECT_GE(stage(it, "map", 0).parallelism, 2) << it.stats_table();
  EXPECT_LE(stage(it, "map", 0).parallelism, 4) << it.stats_table();
  EXPECT_EQ(stage(it, "map", 1).parallelism, 1) << it.stats_table();
  EXPECT_NE(it.stats_table().find("par"), std::string::npos);
}

// The CPU budget caps the tuned parallelism below the iterator's threads.
TEST(AutotuneTest, TheCpuBudgetCapsParallelism) {
  const Dataset ds = Dataset::range(300).map(
      [](const Tensor& x) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return x;
      },
      {.num_parallel_calls = kAutotune});
  Iterator it = ds.make_iterator(tuned(4, 2));
  for (int64_t i = 0; i < 300; ++i) ASSERT_EQ((*it.next())[0].item<int64_t>(), i);
  EXPECT_EQ(stage(it, "map", 0).parallelism, 2) << it.stats_table();
}

// Stages finishing out of order (costs that vary by element) still deliver in order, tuned or
// not, with the buffers under a budget of a few elements or not.
TEST(AutotuneTest, OutputIsTheSameTunedOrNot) {
  auto make = [] {
    return Dataset::range(200)
        .map(
            [](const Tensor& x) {
              const int64_t v = x.item<int64_t>();
              if (v % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
              return Tensor::scalar(v * v);
            },
            {.num_parallel_calls = kAutotune})
        .prefetch(kAutotune)
        .map_and_batch([](const Tensor& x) { return Tensor::scalar(x.item<int64_t>() + 1); }, 3,
                       false, {.num_parallel_calls = kAutotune});
  };
  std::vector<Element> expected;
  for (int64_t b = 0; b < 200; b += 3) {
    std::vector<int64_t> batch;
    for (int64_t v = b; v < std::min<int64_t>(b + 3, 200); ++v) batch.push_back(v * v + 1);
    expected.push_back(testing::V(batch));
  }
  Options off = tuned(3);
  off.autotune.enabled = false;
  testing::expect_elements(testing::collect(make(), off), expected, "autotune off");
  testing::expect_elements(testing::collect(make(), tuned(3)), expected, "tuned");
  testing::expect_elements(testing::collect(make(), tuned(3, 2, 64)), expected, "64 bytes");
  testing::expect_elements(testing::collect(make(), tuned(1)), expected, "1 thread");
}

TEST(AutotuneTest, ResumesTuned) {
  auto make = [] {
    return Dataset::range(60)
        .map(
            [](const Tensor& x) {
              const int64_t v = x.item<int64_t>();
              if (v % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
              return Tensor::scalar(v * 3);
            },
            {.num_parallel_calls = kAutotune})
        .prefetch(kAutotune)
        .batch(4)
        .prefetch(kAutotune);
  };
  testing::expect_resumes(make);
  Options small;
  small.autotune.ram_budget = 256;  // A few elements: the byte gates take part in the saves.
  testing::expect_resumes(make, small);
  Options off;
  off.autotune.enabled = false;
  testing::expect_resumes(make, off);
}

// autotune=false: AUTOTUNE parallelism is the thread budget and a prefetch buffer holds 1, as
// before tuning existed; tuned, a map starts at 1 and a prefetch at 16.
TEST(AutotuneTest, DisabledKeepsAutotuneFixed) {
  const Dataset ds = Dataset::range(50)
                         .map([](const Tensor& x) { return x; }, {.num_parallel_calls = kAutotune})
                         .prefetch(kAutotune);
  Options off = tuned(3);
  off.autotune.enabled = false;
  Iterator fixed = ds.make_iterator(off);
  for (int64_t i = 0; i < 50; ++i) ASSERT_EQ((*fixed.next())[0].item<int64_t>(), i);
  EXPECT_EQ(stage(fixed, "map", 1).parallelism, 3) << fixed.stats_table();
  EXPECT_EQ(stage(fixed, "prefetch", 0).buffer_limit, 1) << fixed.stats_table();
  EXPECT_EQ(stage(fixed, "prefetch", 0).peak_buffered_bytes, 0) << fixed.stats_table();

  // Tuned, a stage starts at the whole CPU budget (tf.data's start) and the buffer at 16.
  Iterator on = ds.make_iterator(tuned(3));
  EXPECT_EQ(stage(on, "map", 1).parallelism, 3) << on.stats_table();
  EXPECT_EQ(stage(on, "prefetch", 0).buffer_limit, 16) << on.stats_table();
  EXPECT_EQ(ints(ds, tuned(3)), range_vector(50));
}

// prefetch(AUTOTUNE) right after map_and_batch becomes that stage's own tuned buffer, with no
// stage and feeder thread of its own: two batches to start, doubling as a prefetch's buffer does,
// within the RAM budget. Output and resumes are those of the pipeline unfolded.
TEST(AutotuneTest, PrefetchAutotuneFoldsIntoMapAndBatch) {
  auto make = [] {
    return Dataset::range(120)
        .map(big, {.num_parallel_calls = kAutotune})
        .batch(4)
        .prefetch(kAutotune);
  };
  Iterator it = make().make_iterator(tuned(3));
  ASSERT_EQ(it.stats().size(), 2u) << it.stats_table();
  EXPECT_EQ(stage(it, "map_and_batch", 0).buffer_limit, 2) << it.stats_table();

  constexpr int64_t kBudget = 12 * kElementBytes;  // Three batches.
  Iterator small = make().make_iterator(tuned(3, 3, kBudget));
  for (int64_t b = 0; b < 30; ++b) {
    auto e = small.next();
    ASSERT_TRUE(e.has_value()) << b;
    ASSERT_EQ((*e)[0].data<int64_t>()[0], 4 * b);
    // A consumer slower than the producer at first lets the buffer fill up.
    if (b < 10) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GT(stage(small, "map_and_batch", 0).peak_buffered_bytes, 0) << small.stats_table();
  EXPECT_LE(stage(small, "map_and_batch", 0).peak_buffered_bytes, kBudget) << small.stats_table();

  Options unoptimized = tuned(3);
  unoptimized.static_optimizations = false;
  const std::vector<Element> expected = testing::collect(make(), unoptimized);
  testing::expect_elements(testing::collect(make(), tuned(3)), expected, "folded");
  Options off = tuned(3);
  off.autotune.enabled = false;
  testing::expect_elements(testing::collect(make(), off), expected, "autotune off");
  testing::expect_resumes(make);
  Options small_budget;
  small_budget.autotune.ram_budget = kBudget;
  testing::expect_resumes(make, small_budget);
}

// interleave's AUTOTUNE cycle is the CPU budget, fixed for the iterator's life.
TEST(AutotuneTest, InterleaveCycleIsTheCpuBudget) {
  auto inner = [](const Tensor& x) {
    return Dataset::range(3).map([v = x.item<int64_t>()](const Tensor& y) {
      return Tensor::scalar(10 * v + y.item<int64_t>());
    });
  };
  const Dataset autotuned = Dataset::range(4).interleave(inner);
  const Dataset two = Dataset::range(4).interleave(inner, {.cycle_length = 2});
  EXPECT_EQ(ints(autotuned, tuned(4, 2)), ints(two));
  EXPECT_EQ(ints(two), (std::vector<int64_t>{0, 10, 1, 11, 2, 12, 20, 30, 21, 31, 22, 32}));
}

// A parallel interleave under AUTOTUNE: its open datasets' buffers are tuned (they start at two
// blocks) and the output and saved states are those of a fixed one.
TEST(AutotuneTest, ParallelInterleaveTunesItsBuffersAndResumes) {
  auto make = [](int64_t parallel) {
    return Dataset::range(5).interleave(
        [](const Tensor& x) {
          const int64_t v = x.item<int64_t>();
          return Dataset::range(4 + v).map(
              [v](const Tensor& y) { return Tensor::scalar(100 * v + y.item<int64_t>()); });
        },
        {.cycle_length = 2, .block_length = 2, .num_parallel_calls = parallel});
  };
  EXPECT_EQ(ints(make(kAutotune), tuned(2)), ints(make(0)));
  Iterator it = make(kAutotune).make_iterator(tuned(2));
  it.next();
  EXPECT_GE(stage(it, "interleave cycle", 1).buffer_limit, 4) << it.stats_table();
  testing::expect_resumes([&] { return make(kAutotune); });
  Options small;
  small.autotune.ram_budget = 64;
  testing::expect_resumes([&] { return make(kAutotune); }, small);
}

TEST(AutotuneTest, OptionsMergeAndCheckTheBudgets) {
  Options a;
  a.autotune.enabled = false;
  a.autotune.ram_budget = 100;
  Options b;
  b.autotune.cpu_budget = 3;
  b.autotune.ram_budget = 200;
  const Options merged = a.merged_with(b);
  EXPECT_EQ(merged.autotune.enabled, false);
  EXPECT_EQ(merged.autotune.ram_budget, 200);
  EXPECT_EQ(merged.autotune.cpu_budget, 3);
  // with_options() carries them too.
  EXPECT_EQ(ints(Dataset::range(5).with_options(b)), range_vector(5));

  Options bad_ram;
  bad_ram.autotune.ram_budget = 0;
  EXPECT_THROW(Dataset::range(3).make_iterator(bad_ram), InvalidArgument);
  Options bad_cpu;
  bad_cpu.autotune.cpu_budget = -2;
  EXPECT_THROW(Dataset::range(3).make_iterator(bad_cpu), InvalidArgument);
}

}  // namespace
}  // namespace sluice
