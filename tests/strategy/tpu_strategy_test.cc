// TPUClusterResolver's addresses and environment, Dataset::static_batch_size, and what
// TPUStrategy refuses of a dataset (reference §4.3, §4.5 check 7).
#include "sluice/strategy/tpu_strategy.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>

#include "sluice/core/errors.h"
#include "sluice/dataset/dataset.h"
#include "sluice/strategy/mirrored_strategy.h"
#include "sluice/strategy/tpu_cluster_resolver.h"

namespace sluice {
namespace {

// Sets (or, with nullopt, unsets) an environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = ::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A clean environment: neither TPU_NAME nor SLUICE_TPU_CORES.
class TPUClusterResolverTest : public ::testing::Test {
 protected:
  ScopedEnv name_{"TPU_NAME", std::nullopt};
  ScopedEnv cores_{"SLUICE_TPU_CORES", std::nullopt};
};

template <class F>
std::string invalid_argument_message(F f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidArgument";
  return "";
}

TEST_F(TPUClusterResolverTest, DefaultsToALocalSystemOfEightCores) {
  TPUClusterResolver resolver;
  EXPECT_EQ(resolver.tpu(), "local");
  EXPECT_EQ(resolver.master(), "");
  EXPECT_EQ(resolver.num_accelerators(), 8);
  EXPECT_EQ(TPUClusterResolver("local").num_accelerators(), 8);
}

TEST_F(TPUClusterResolverTest, LocalColonNChoosesTheCoreCount) {
  EXPECT_EQ(TPUClusterResolver("local:4").num_accelerators(), 4);
  EXPECT_EQ(TPUClusterResolver("local:1").num_accelerators(), 1);
  EXPECT_EQ(TPUClusterResolver("local:32").tpu(), "local:32");
}

TEST_F(TPUClusterResolverTest, GrpcAddressesAndNamesResolveToThisHost) {
  TPUClusterResolver grpc("grpc://10.240.1.2:8470");
  EXPECT_EQ(grpc.master(), "grpc://10.240.1.2:8470");
  EXPECT_EQ(grpc.num_accelerators(), 8);  // The port is not a core count.
  EXPECT_EQ(grpc.host(), "localhost");
  TPUClusterResolver named("my-tpu");
  EXPECT_EQ(named.tpu(), "my-tpu");
  EXPECT_EQ(named.master(), "");
}

TEST_F(TPUClusterResolverTest, EmptyArgumentReadsTpuNameFromTheEnvironment) {
  {
    ScopedEnv env("TPU_NAME", "local:2");
    TPUClusterResolver resolver("");
    EXPECT_EQ(resolver.tpu(), "local:2");
    EXPECT_EQ(resolver.num_accelerators(), 2);
  }
  {
    ScopedEnv env("TPU_NAME", "grpc://10.0.0.3:8470");
    EXPECT_EQ(TPUClusterResolver().master(), "grpc://10.0.0.3:8470");
  }
  {
    // An explicit argument wins over the environment.
    ScopedEnv env("TPU_NAME", "local:2");
    EXPECT_EQ(TPUClusterResolver("local:3").num_accelerators(), 3);
  }
  {
    ScopedEnv env("TPU_NAME", "");
    EXPECT_EQ(TPUClusterResolver().tpu(), "local");
  }
}

TEST_F(TPUClusterResolverTest, SluiceTpuCoresChoosesTheCountUnlessTheAddressDoes) {
  ScopedEnv env("SLUICE_TPU_CORES", "4");
  EXPECT_EQ(TPUClusterResolver().num_accelerators(), 4);
  EXPECT_EQ(TPUClusterResolver("grpc://10.0.0.3:8470").num_accelerators(), 4);
  EXPECT_EQ(TPUClusterResolver("local:2").num_accelerators(), 2);
}

TEST_F(TPUClusterResolverTest, MalformedAddressesAndCountsAreInvalidArguments) {
  for (const char* bad : {"local:0", "local:", "local:x", "local:-2", "local:4x", "my tpu"}) {
    const std::string message = invalid_argument_message([&] { TPUClusterResolver r(bad); });
    EXPECT_NE(message.find(bad), std::string::npos) << message;
  }
  ScopedEnv env("SLUICE_TPU_CORES", "eight");
  EXPECT_NE(invalid_argument_message([] { TPUClusterResolver r; }).find("SLUICE_TPU_CORES"),
            std::string::npos);
}

TEST(TPUStrategyTest, HasOneReplicaPerCoreAndSaysNoTpuIsAttached) {
  std::ostringstream log;
  TPUStrategy strategy(TPUClusterResolver("local:4"), 2, &log);
  EXPECT_EQ(strategy.name(), "TPUStrategy");
  EXPECT_EQ(strategy.num_replicas_in_sync(), 4);
  EXPECT_EQ(strategy.num_threads(), 2);
  EXPECT_EQ(strategy.cluster_resolver().tpu(), "local:4");
  EXPECT_NE(log.str().find("no TPU hardware is attached"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("4 cores"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("2 CPU threads"), std::string::npos) << log.str();
  const std::string text = log.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
}

TEST(StaticBatchSizeTest, KnownOnlyWhenTheLastBatchingDropsTheRemainder) {
  const Dataset range = Dataset::range(10);
  EXPECT_EQ(range.static_batch_size(), std::nullopt);
  EXPECT_EQ(range.batch(4).static_batch_size(), std::nullopt);
  EXPECT_EQ(range.batch(4, true).static_batch_size(), 4);
  EXPECT_EQ(range.padded_batch(3, {}, true).static_batch_size(), 3);
  EXPECT_EQ(range.padded_batch(3).static_batch_size(), std::nullopt);
  EXPECT_EQ(range.map_and_batch([](const Tensor& t) { return t; }, 5, true).static_batch_size(), 5);
  EXPECT_EQ(range.map_and_batch([](const Tensor& t) { return t; }, 5).static_batch_size(),
            std::nullopt);
  // The last batching decides.
  EXPECT_EQ(range.batch(2, true).unbatch().batch(3).static_batch_size(), std::nullopt);
  EXPECT_EQ(range.batch(2).unbatch().batch(3, true).static_batch_size(), 3);
  EXPECT_EQ(range.batch(2, true).unbatch().static_batch_size(), std::nullopt);
  EXPECT_EQ(range.batch(2, true).batch(2).static_batch_size(), std::nullopt);
}

TEST(StaticBatchSizeTest, StagesThatKeepElementsKeepIt) {
  const Dataset batched = Dataset::range(100).batch(4, true);
  const Dataset kept = batched.map([](const Tensor& t) { return t; }, {.num_parallel_calls = 2})
                           .shuffle(3, 1)
                           .repeat(2)
                           .take(7)
                           .skip(1)
                           .shard(2, 0)
                           .filter([](const Tensor&) { return true; })
                           .cache()
                           .ignore_errors()
                           .prefetch(2)
                           .enumerate()
                           .with_options(Options{});
  EXPECT_EQ(kept.static_batch_size(), 4);
  EXPECT_EQ(batched.shuffle_and_repeat(2).static_batch_size(), 4);
  EXPECT_EQ(Dataset::zip({batched, batched}).static_batch_size(), 4);
  EXPECT_EQ(batched.concatenate(batched).static_batch_size(), 4);
  EXPECT_EQ(Dataset::zip({batched, Dataset::range(9).batch(3, true)}).static_batch_size(),
            std::nullopt);
  EXPECT_EQ(batched.concatenate(Dataset::range(9).batch(4)).static_batch_size(), std::nullopt);
  EXPECT_EQ(batched.interleave([](const Tensor&) { return Dataset::range(4).batch(4, true); })
                .static_batch_size(),
            std::nullopt);
}

TEST(TPUStrategyTest, RefusesADatasetWithoutStaticBatchDimension) {
  TPUStrategy strategy(TPUClusterResolver("local:2"), 1, nullptr);
  const std::string message = invalid_argument_message(
      [&] { strategy.experimental_distribute_dataset(Dataset::range(10).batch(4)); });
  EXPECT_NE(message.find("drop_remainder=true"), std::string::npos) << message;
  EXPECT_NE(message.find("static"), std::string::npos) << message;
  // Full batches whose size an interleave hides get a message that says so.
  const std::string hidden = invalid_argument_message([&] {
    strategy.experimental_distribute_dataset(Dataset::range(2).interleave(
        [](const Tensor&) { return Dataset::range(8).batch(4, true); }));
  });
  EXPECT_NE(hidden.find("interleave"), std::string::npos) << hidden;
  EXPECT_THROW(strategy.experimental_distribute_dataset(Dataset::range(10)), InvalidArgument);
  EXPECT_THROW(strategy.distribute_datasets_from_function(
                   [](const InputContext&) { return Dataset::range(10).batch(2); }),
               InvalidArgument);
  // MirroredStrategy accepts a partial last batch (split_batch's rule).
  MirroredStrategy mirrored(2, 1);
  EXPECT_NO_THROW(mirrored.experimental_distribute_dataset(Dataset::range(10).batch(4)));
}

TEST(TPUStrategyTest, RefusesAGlobalBatchNotDivisibleByTheCores) {
  TPUStrategy strategy(TPUClusterResolver("local:4"), 1, nullptr);
  const std::string message = invalid_argument_message(
      [&] { strategy.experimental_distribute_dataset(Dataset::range(60).batch(6, true)); });
  EXPECT_NE(message.find("global batch size 6"), std::string::npos) << message;
  EXPECT_NE(message.find("4 TPU cores"), std::string::npos) << message;
  // Per-replica batches need no divisibility: the global batch is 4 × 3.
  EXPECT_NO_THROW(strategy.distribute_datasets_from_function(
      [](const InputContext&) { return Dataset::range(60).batch(3, true); }));
}

TEST(TPUStrategyTest, DistributesStaticGlobalBatchesEvenly) {
  TPUStrategy strategy(TPUClusterResolver("local:4"), 2, nullptr);
  auto it =
      strategy.experimental_distribute_dataset(Dataset::range(18).batch(8, true)).make_iterator();
  int steps = 0;
  int64_t expected = 0;
  while (auto per_replica = it.next()) {
    ASSERT_EQ(per_replica->size(), 4u);
    for (const Element& part : *per_replica) {
      ASSERT_EQ(part[0].dim(0), 2);
      for (int64_t v : part[0].values<int64_t>()) EXPECT_EQ(v, expected++);
    }
    ++steps;
  }
  EXPECT_EQ(steps, 2);  // 18 = 2 × 8 + 2: the partial batch is dropped.
}

}  // namespace
}  // namespace sluice
