// The engine's guarantees: cancellation, bounded memory, determinism whatever the thread count,
// statistics. Built with the tsan preset, these run under ThreadSanitizer.
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "sluice/core/threads.h"
#include "tests/dataset/testing.h"

namespace sluice {
namespace {

using testing::collect;
using testing::ints;
using Clock = std::chrono::steady_clock;

TEST(CancellationTest, DestroyingAnInfinitePipelineWaitsOnlyForTheCallsAlreadyRunning) {
  // The map and batch fuse: a task holds one batch or more, the first exactly one. The calls past
  // the first batch and a half block until released, so every task in flight blocks with most of
  // its calls still to run. The destructor can only return once the blocked calls are released,
  // and must not start the other calls of their tasks, nor pull more of the infinite input.
  constexpr int kParallelCalls = 4;
  constexpr int64_t kBatch = 1000;
  constexpr int64_t kFree = kBatch * 3 / 2;
  std::atomic<int> started{0};
  std::atomic<int> blocked{0};
  std::atomic<bool> released{false};
  auto ds = Dataset::range(1000000)
                .repeat(-1)
                .map(
                    [&](const Tensor& x) {
                      ++started;
                      if (x.item<int64_t>() < kFree) return x;
                      ++blocked;
                      while (!released.load()) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                      }
                      return x;
                    },
                    {.num_parallel_calls = kParallelCalls})
                .batch(kBatch);
  auto it = std::make_unique<Iterator>(ds.make_iterator());
  ASSERT_TRUE(it->next().has_value());
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (blocked.load() == 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (blocked.load() == 0) {
    released = true;  // So that the iterator's destructor cannot wait on a call blocked later.
    FAIL() << "no call reached the blocking inputs";
  }
  std::thread destroyer([&] { it.reset(); });
  // The destructor cancels the stage, then joins its feeder, then waits for the calls in flight.
  while (live_feeder_threads() > 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(live_feeder_threads(), 0) << "the destructor did not stop the feeder";
  const int started_before = started.load();
  released = true;
  destroyer.join();
  // A worker that checked for cancellation just before it landed may start one more call.
  EXPECT_LE(started.load() - started_before, kParallelCalls);
  const int started_after = started.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(started.load(), started_after);
}

TEST(CancellationTest, ManyIteratorsCreatedAndDestroyedMidStreamLeaveNoThreads) {
  auto ds = Dataset::range(100000)
                .repeat()
                .map([](const Tensor& x) { return x; }, {.num_parallel_calls = 2})
                .shuffle(64, 1)
                .batch(8)
                .prefetch(2);
  {
    Iterator running = ds.make_iterator();
    ASSERT_TRUE(running.next().has_value());
    ASSERT_GT(live_feeder_threads(), 0);
    ASSERT_GT(testing::threads_named_feeder(), 0) << "a running pipeline's feeders are not named";
  }
  for (int round = 0; round < 300; ++round) {
    Iterator it = ds.make_iterator();
    for (int i = 0; i < round % 7; ++i) ASSERT_TRUE(it.next().has_value());
  }
  EXPECT_EQ(live_feeder_threads(), 0);
}

// Elements whose buffers count themselves, so a test can see how many are alive.
struct LiveCounter {
  std::atomic<int64_t> live{0};
  std::atomic<int64_t> peak{0};

  Element make(int64_t value) {
    auto* data = new int64_t(value);
    const int64_t now = ++live;
    int64_t seen = peak.load();
    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
    }
    return Element{Tensor::from_external(DType::kInt64, {}, data, [this, data] {
      delete data;
      --live;
    })};
  }
};

TEST(BackpressureTest, AnInfinitelyFastSourceDoesNotFillMemory) {
  LiveCounter counter;
  auto ds = Dataset::from_generator([&counter] {
              return [&counter, i = int64_t{0}]() mutable -> std::optional<Element> {
                return counter.make(i++);
              };
            })
                .map([](Element e) { return e; }, {.num_parallel_calls = 2})
                .prefetch(16);
  Iterator it = ds.make_iterator(testing::threads(2));
  const int64_t total = 200000;
  for (int64_t i = 0; i < total; ++i) {
    auto e = it.next();
    ASSERT_EQ((*e)[0].item<int64_t>(), i);
  }
  // Bound: the map's window (2 x parallelism tasks of at most 1024 elements), its prefetch
  // buffer, the consumer's chunk and the engine's hand-over buffers; far below `total`.
  EXPECT_LT(counter.peak.load(), 8 * 1024);
  EXPECT_GT(counter.peak.load(), 0);
}

// A producer slower than its consumer (batches of images) never fills prefetch(AUTOTUNE)'s
// buffer, so the buffer must not grow, and each element must be handed on as soon as it exists
// rather than gathered into tasks.
TEST(BackpressureTest, AutotunedPrefetchOfASlowProducerStaysSmallAndHandsOnAtOnce) {
  LiveCounter counter;
  auto ds = Dataset::from_generator([&counter] {
              return [&counter, i = int64_t{0}]() mutable -> std::optional<Element> {
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                return counter.make(i++);
              };
            }).prefetch(kAutotune);
  Iterator it = ds.make_iterator(testing::threads(2));
  int crowded = 0;  // Elements received while more than the starved few were alive.
  for (int64_t i = 0; i < 300; ++i) {
    auto e = it.next();
    ASSERT_EQ((*e)[0].item<int64_t>(), i);
    // Starved all the time: the consumer holds one element, the producer at most one more. A
    // consumer descheduled for a few milliseconds on a busy machine may find a couple more;
    // elements gathered into tasks would crowd nearly every receipt.
    if (i >= 10 && counter.live.load() > 3) ++crowded;
  }
  EXPECT_LE(crowded, 30);
  EXPECT_LE(counter.peak.load(), 16);  // The autotuner's initial buffer, never doubled.
}

TEST(BackpressureTest, ShuffleAndBatchHoldOnlyTheirBuffers) {
  LiveCounter counter;
  auto ds = Dataset::from_generator([&counter] {
              return [&counter, i = int64_t{0}]() mutable -> std::optional<Element> {
                return counter.make(i++);
              };
            })
                .shuffle(100, 1)
                .batch(10);
  Iterator it = ds.make_iterator();
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(it.next().has_value());
  // Batches copy, so the live inputs are the shuffle buffer and its read-ahead.
  EXPECT_LE(counter.peak.load(), 100 + 64 + 10);
}

Dataset augmented_pipeline() {
  return Dataset::range(400)
      .map(
          [](Element e, const ElementContext& ctx) {
            Random rng = ctx.random();
            return Element{Tensor::scalar(e[0].item<int64_t>() * 1000 + rng.uniform_int(1000))};
          },
          {.num_parallel_calls = kAutotune, .seed = 7})
      .shuffle(50, 3)
      .batch(8)
      .prefetch(kAutotune);
}

TEST(DeterminismTest, SeededRandomPipelinesGiveTheSameOutputAtAnyThreadCount) {
  const auto reference = collect(augmented_pipeline(), testing::threads(1));
  ASSERT_EQ(reference.size(), 50u);
  for (int n : {2, 8}) {
    testing::expect_elements(collect(augmented_pipeline(), testing::threads(n)), reference,
                             "threads=" + std::to_string(n));
  }
  // The random draws really depend on the seed.
  auto unseeded = Dataset::range(400).map([](Element e, const ElementContext& ctx) {
    return Element{Tensor::scalar(e[0].item<int64_t>() * 1000 + ctx.random().uniform_int(1000))};
  });
  EXPECT_NE(ints(unseeded), ints(unseeded));
}

TEST(DeterminismTest, EpochsDrawFreshRandomness) {
  auto ds = Dataset::range(50).map(
      [](Element, const ElementContext& ctx) {
        return Element{Tensor::scalar(ctx.random().uniform_int(1 << 30))};
      },
      {.seed = 5});
  auto values = ints(ds.repeat(2));
  EXPECT_NE(std::vector<int64_t>(values.begin(), values.begin() + 50),
            std::vector<int64_t>(values.begin() + 50, values.end()));
}

TEST(StatsTest, EveryStageReportsWhatItProduced) {
  auto ds = Dataset::range(10000)
                .map([](const Tensor& x) { return x; }, {.num_parallel_calls = 2})
                .batch(100)
                .prefetch(2);
  Iterator it = ds.make_iterator();
  while (it.next()) {
  }
  std::map<std::string, StageStatsSnapshot> by_name;
  for (const auto& s : it.stats()) by_name[s.name] = s;
  ASSERT_TRUE(by_name.count("range"));
  ASSERT_TRUE(by_name.count("map_and_batch")) << it.stats_table();
  EXPECT_EQ(by_name["range"].elements, 10000);
  EXPECT_EQ(by_name["map_and_batch"].elements, 100);
  EXPECT_EQ(by_name["map_and_batch"].parallelism, 2);
  EXPECT_GT(by_name["map_and_batch"].busy_seconds, 0.0);
  EXPECT_GT(by_name["range"].depth, by_name["map_and_batch"].depth);
  EXPECT_NE(it.stats_table().find("map_and_batch"), std::string::npos);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

TEST(ThreadLimitTest, AProcessLimitOfOneThreadIsAnErrorNotAHang) {
  // With max_allowed_parallelism 1, oneTBB has no worker to run the pipeline's tasks.
  std::optional<oneapi::tbb::global_control> limit;
  limit.emplace(oneapi::tbb::global_control::max_allowed_parallelism, 1);
  const Dataset ds =
      Dataset::range(100).map([](Element e) { return e; }, {.num_parallel_calls = 2});
  try {
    auto it = ds.make_iterator(Options{.threads = 1});
    it.next();
    FAIL() << "expected FailedPrecondition";
  } catch (const FailedPrecondition& e) {
    EXPECT_NE(std::string(e.what()).find("at least 2"), std::string::npos) << e.what();
  }
  // With one thread more than the pipeline's the consumer gets every element.
  limit.emplace(oneapi::tbb::global_control::max_allowed_parallelism, 2);
  int64_t count = 0;
  for (const Element& e : ds.with_options(Options{.threads = 1}))
    count += e[0].item<int64_t>() >= 0;
  EXPECT_EQ(count, 100);
}

size_t tbb_parallelism_limit() {
  return oneapi::tbb::global_control::active_value(
      oneapi::tbb::global_control::max_allowed_parallelism);
}

TEST(ThreadBudgetTest, TheLibraryNeverChangesTheProcessWidePool) {
  const size_t before = tbb_parallelism_limit();
  const Dataset ds =
      Dataset::range(1000).map([](Element e) { return e; }, {.num_parallel_calls = 8}).prefetch(4);
  auto it = ds.make_iterator(Options{.threads = 8});
  ASSERT_TRUE(it.next());
  EXPECT_EQ(tbb_parallelism_limit(), before);  // Asking for 8 threads took what the pool has.
  int64_t count = 1;
  while (it.next()) ++count;
  EXPECT_EQ(count, 1000);
}

TEST(ThreadBudgetTest, ABudgetSizesThePoolAndNestedBudgetsOnlyNarrowIt) {
  const size_t before = tbb_parallelism_limit();
  const int outer_threads = ThreadBudget::current();
  {
    const ThreadBudget three(3);
    EXPECT_EQ(ThreadBudget::current(), std::min(3, outer_threads));
    EXPECT_EQ(tbb_parallelism_limit(), static_cast<size_t>(ThreadBudget::current()) + 1);
    {
      const ThreadBudget one(1);
      EXPECT_EQ(ThreadBudget::current(), 1);
      EXPECT_EQ(tbb_parallelism_limit(), 2u);  // One worker for the pipeline, one caller.
      // A pipeline on a budget of one thread still delivers everything.
      int64_t sum = 0;
      for (const Element& e : Dataset::range(100).map([](Element e) { return e; },
                                                      {.num_parallel_calls = kAutotune})) {
        sum += e[0].item<int64_t>();
      }
      EXPECT_EQ(sum, 4950);
      const ThreadBudget wider(16);
      EXPECT_EQ(ThreadBudget::current(), 1);  // Nested budgets never widen.
    }
    EXPECT_EQ(ThreadBudget::current(), std::min(3, outer_threads));
  }
  EXPECT_EQ(ThreadBudget::current(), outer_threads);
  EXPECT_EQ(tbb_parallelism_limit(), before);
  EXPECT_THROW(ThreadBudget(-1), InvalidArgument);
}

TEST(ThreadBudgetTest, ACallerThatComputesIsOneOfTheBudgetsThreads) {
  const size_t before = tbb_parallelism_limit();
  {
    const ThreadBudget three(3, ThreadBudget::Caller::kComputes);
    const int threads = ThreadBudget::current();
    // The caller and threads - 1 workers, but never fewer than the one worker a pipeline needs.
    EXPECT_EQ(tbb_parallelism_limit(), static_cast<size_t>(std::max(threads, 2)));
    {
      const ThreadBudget one(1, ThreadBudget::Caller::kComputes);
      EXPECT_EQ(ThreadBudget::current(), 1);
      EXPECT_EQ(tbb_parallelism_limit(), 2u);
      int64_t sum = 0;
      for (const Element& e : Dataset::range(100).map([](Element e) { return e; },
                                                      {.num_parallel_calls = kAutotune})) {
        sum += e[0].item<int64_t>();
      }
      EXPECT_EQ(sum, 4950);
    }
  }
  EXPECT_EQ(tbb_parallelism_limit(), before);
}

TEST(ThreadBudgetTest, AnIteratorAskingForMoreThreadsThanThePoolHoldsLeavesStderrClean) {
  // A new budget re-arms oneTBB's one-time warning about arenas that ask for more workers than
  // the pool holds.
  const ThreadBudget computing(2, ThreadBudget::Caller::kComputes);
  ::testing::internal::CaptureStderr();
  int64_t sum = 0;
  for (const Element& e : Dataset::range(100)
                              .map([](Element e) { return e; }, {.num_parallel_calls = 8})
                              .with_options(Options{.threads = 8})) {
    sum += e[0].item<int64_t>();
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(sum, 4950);
}

}  // namespace
}  // namespace sluice
