// MultiWorkerMirroredStrategy (reference §4.2): auto-shard policies in one process, then real MPI
// jobs under mpirun — cross-worker collectives identical on every worker, a stopped or dead
// worker ending the job with a clear error, and `sluice train --strategy multiworker` on 2
// processes reaching the weights of one process with 2 mirrored replicas. One file, about 560
// lines, so the MPI jobs share their fixtures.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "sluice/core/errors.h"
#include "sluice/core/strings.h"
#include "sluice/dataset/dataset.h"
#include "sluice/dataset/image_folder.h"
#include "sluice/dataset/list_files.h"
#include "sluice/dataset/tfrecord_dataset.h"
#include "sluice/estimator/checkpoint.h"
#include "sluice/formats/png.h"
#include "sluice/formats/tfrecord_writer.h"
#include "sluice/strategy/auto_shard.h"
#include "sluice/strategy/strategy.h"
#include "tests/formats/testing.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> batches_of(const Dataset& dataset) {
  std::vector<std::string> out;
  for (const Element& e : dataset) {
    std::string rows;
    for (int64_t v : e[0].values<int64_t>()) rows += (rows.empty() ? "" : ",") + std::to_string(v);
    out.push_back(rows);
  }
  return out;
}

// --- Auto-shard policies ------------------------------------------------------------------------

TEST(AutoShardTest, DataShardingOfTwelveElementsMatchesTheReference) {
  // §4.2: one file [0..11], 2 workers, global batch 4.
  const Dataset batches = Dataset::range(12).batch(4);
  EXPECT_EQ(batches_of(shard_global_batches(batches, 2, 0)),
            (std::vector<std::string>{"0,1", "4,5", "8,9"}));
  EXPECT_EQ(batches_of(shard_global_batches(batches, 2, 1)),
            (std::vector<std::string>{"2,3", "6,7", "10,11"}));
  // A short last batch is split as MirroredStrategy splits it over replicas: 10 → 4,4,2.
  EXPECT_EQ(batches_of(shard_global_batches(Dataset::range(10).batch(4), 2, 1)),
            (std::vector<std::string>{"2,3", "6,7", "9"}));
  EXPECT_THROW(shard_global_batches(batches, 2, 2), InvalidArgument);
}

TEST(AutoShardTest, FileShardingDealsFilesByIndexModuloWorkers) {
  const std::vector<std::string> files{"a", "b", "c", "d", "e"};
  EXPECT_EQ(shard_files(files, 2, 0), (std::vector<std::string>{"a", "c", "e"}));
  EXPECT_EQ(shard_files(files, 2, 1), (std::vector<std::string>{"b", "d"}));
  EXPECT_EQ(shard_files(files, 1, 0), files);
}

TEST(AutoShardTest, FileShardingWithFewerFilesThanWorkersIsAnError) {
  try {
    shard_files({"only.tfrecord"}, 2, 0);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("1 file(s) cannot be sharded over 2 workers"),
              std::string::npos)
        << e.what();
  }
}

TEST(AutoShardTest, PoliciesParseByName) {
  EXPECT_EQ(parse_auto_shard_policy("file"), AutoShardPolicy::kFile);
  EXPECT_EQ(auto_shard_policy_name(parse_auto_shard_policy("off")), "off");
  EXPECT_THROW(parse_auto_shard_policy("hint"), InvalidArgument);
}

// One worker of an in-process cluster: experimental_distribute_dataset needs the cluster's shape
// only (no collective runs).
class ClusterWorker final : public Strategy {
 public:
  ClusterWorker(int workers, int index) : Strategy(1, 1) { set_cluster(workers, index); }
  std::string_view name() const override { return "ClusterWorker"; }
};

// Five TFRecord files of 3 records each, "f<file>-r<record>".
class FileShardTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    for (int f = 0; f < 5; ++f) {
      files_.push_back(path("part-" + std::to_string(f) + ".tfrecord"));
      TFRecordWriter writer(files_.back());
      for (int r = 0; r < 3; ++r) writer.write("f" + std::to_string(f) + "-r" + std::to_string(r));
      writer.close();
    }
  }

  // The rows worker `index` of `workers` trains on, batch by batch, and its decision.
  static std::pair<std::vector<std::vector<std::string>>, std::string> worker_batches(
      const Dataset& global_batches, int workers, int index,
      AutoShardPolicy policy = AutoShardPolicy::kAuto) {
    const DistributedDataset distributed =
        ClusterWorker(workers, index).experimental_distribute_dataset(global_batches, policy);
    std::vector<std::vector<std::string>> batches;
    for (const Element& batch : distributed.dataset()) {
      const auto rows = batch[0].strings();
      batches.emplace_back(rows.begin(), rows.end());
    }
    return {batches, distributed.auto_shard()};
  }

  // The records of `files`, in order.
  static std::vector<std::string> records_of(const std::vector<std::string>& files) {
    std::vector<std::string> out;
    for (const Element& e : TFRecordDataset(files)) out.push_back(e[0].item<std::string>());
    return out;
  }

  std::vector<std::string> files_;
};

TEST_F(FileShardTest, EachWorkerReadsItsOwnFilesAndBatchesItsShareOfTheGlobalBatch) {
  const Dataset global = TFRecordDataset(files_).batch(4);
  std::multiset<std::string> everything;
  for (int w = 0; w < 2; ++w) {
    const auto [batches, decision] = worker_batches(global, 2, w);
    EXPECT_EQ(decision, w == 0 ? "auto-shard FILE: worker 0 of 2 reads 3 of 5 files"
                               : "auto-shard FILE: worker 1 of 2 reads 2 of 5 files");
    // Its files j ≡ w (mod 2), read whole and in order, in batches of 4 / 2 rows.
    std::vector<std::string> mine;
    for (size_t f = static_cast<size_t>(w); f < files_.size(); f += 2) mine.push_back(files_[f]);
    std::vector<std::string> rows;
    for (const auto& batch : batches) {
      EXPECT_LE(batch.size(), 2u);
      rows.insert(rows.end(), batch.begin(), batch.end());
    }
    EXPECT_EQ(rows, records_of(mine));
    everything.insert(rows.begin(), rows.end());
  }
  // Together the workers read every record once.
  const std::vector<std::string> all = records_of(files_);
  EXPECT_EQ(everything, std::multiset<std::string>(all.begin(), all.end()));
}

TEST_F(FileShardTest, ListedFilesAreDealtAfterTheShuffleEveryWorkerSeedsAlike) {
  // Each worker process builds the pipeline and iterates it once: its first shuffled order.
  auto names = [&] {
    return Dataset::list_files(path("*.tfrecord"), /*shuffle=*/true, /*seed=*/7);
  };
  std::vector<std::string> shuffled;
  for (const Element& e : names()) shuffled.push_back(e[0].item<std::string>());
  ASSERT_NE(shuffled, files_);  // The seed gives an order other than the sorted one.
  auto global = [&] {
    return names()
        .interleave([](const Tensor& file) { return TFRecordDataset({file.item<std::string>()}); },
                    {.cycle_length = 1})
        .batch(6)
        .prefetch(1);
  };
  for (int w = 0; w < 3; ++w) {
    const auto [batches, decision] = worker_batches(global(), 3, w, AutoShardPolicy::kFile);
    EXPECT_EQ(decision,
              str_cat("auto-shard FILE: worker ", w, " of 3 reads ", w < 2 ? 2 : 1, " of 5 files"));
    std::vector<std::string> mine;
    for (size_t f = static_cast<size_t>(w); f < shuffled.size(); f += 3)
      mine.push_back(shuffled[f]);
    std::vector<std::string> rows;
    for (const auto& batch : batches) {
      EXPECT_LE(batch.size(), 2u);
      rows.insert(rows.end(), batch.begin(), batch.end());
    }
    EXPECT_EQ(rows, records_of(mine)) << "worker " << w;
  }
}

TEST_F(FileShardTest, AutoIsDataWithFewerFilesThanWorkersAndFileThenFails) {
  const Dataset global = TFRecordDataset({files_[0], files_[1]}).batch(4);
  const auto [batches, decision] = worker_batches(global, 3, 2);
  EXPECT_NE(decision.find("auto-shard DATA: worker 2 of 3"), std::string::npos) << decision;
  EXPECT_NE(decision.find("2 file(s) of tfrecord cannot be sharded over 3 workers"),
            std::string::npos)
      << decision;
  // DATA: the third share of every global batch (4 rows → 2, 2, 0; 2 rows → 1, 1, 0).
  EXPECT_EQ(batches, (std::vector<std::vector<std::string>>{{}, {}}));
  try {
    worker_batches(global, 3, 0, AutoShardPolicy::kFile);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("2 file(s) of tfrecord cannot be sharded over 3 workers"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(FileShardTest, AnImageFolderIsShardedByItsFilesInAFolderAndInAnArchive) {
  for (int i = 0; i < 6; ++i) {
    const fs::path dir = dir_ / "images" / (i % 2 ? "b" : "a");
    fs::create_directories(dir);
    Tensor pixels(DType::kUInt8, Shape{2, 2, 1});
    pixels.data<uint8_t>()[0] = static_cast<uint8_t>(i);
    testing::write_file((dir / (std::to_string(i) + ".png")).string(), encode_png(pixels));
  }
  testing::zip_directory(path("images"), path("images.zip"));
  for (const std::string& source : {path("images"), path("images.zip")}) {
    const ImageFolder folder =
        image_folder(source, {.class_mode = ClassMode::kSparse, .verbose = false});
    ASSERT_EQ(folder.filenames.size(), 6u);
    const Dataset global = image_folder_files(folder).batch(2);
    std::vector<std::string> everything;
    for (int w = 0; w < 2; ++w) {
      const DistributedDataset distributed =
          ClusterWorker(2, w).experimental_distribute_dataset(global);
      EXPECT_EQ(distributed.auto_shard(),
                str_cat("auto-shard FILE: worker ", w, " of 2 reads 3 of 6 files"));
      std::vector<std::string> mine;
      for (const Element& batch : distributed.dataset()) {
        EXPECT_EQ(batch["path"].dim(0), 1);
        for (std::string_view p : batch["path"].strings()) mine.emplace_back(p);
      }
      // The listing's files w, w + 2, w + 4, in order.
      std::vector<std::string> expected;
      for (size_t i = static_cast<size_t>(w); i < 6; i += 2) {
        expected.push_back(folder.filenames[i]);
      }
      EXPECT_EQ(mine, expected) << source;
      everything.insert(everything.end(), mine.begin(), mine.end());
    }
    std::ranges::sort(everything);
    std::vector<std::string> all = folder.filenames;
    std::ranges::sort(all);
    EXPECT_EQ(everything, all) << source;
  }
}

TEST(AutoShardTest, AutoIsDataForAnInputWithoutFiles) {
  const DistributedDataset distributed =
      ClusterWorker(2, 1).experimental_distribute_dataset(Dataset::range(12).batch(4));
  EXPECT_EQ(batches_of(distributed.dataset()), (std::vector<std::string>{"2,3", "6,7", "10,11"}));
  EXPECT_NE(distributed.auto_shard().find("auto-shard DATA: worker 1 of 2"), std::string::npos)
      << distributed.auto_shard();
  EXPECT_THROW(ClusterWorker(2, 0).experimental_distribute_dataset(Dataset::range(12).batch(4),
                                                                   AutoShardPolicy::kFile),
               InvalidArgument);
  // OFF: every worker the whole input.
  EXPECT_EQ(batches_of(ClusterWorker(2, 1)
                           .experimental_distribute_dataset(Dataset::range(8).batch(4),
                                                            AutoShardPolicy::kOff)
                           .dataset()),
            (std::vector<std::string>{"0,1,2,3", "4,5,6,7"}));
}

// --- MPI jobs -----------------------------------------------------------------------------------

struct JobResult {
  int status = -1;  // Exit status; 124 when the `timeout` guard had to stop it.
  std::string output;
};

// Runs `command` (stdout and stderr together) under a 240 s guard so a hang fails the test
// instead of blocking it.
JobResult run(const std::string& command) {
  JobResult result;
  FILE* pipe = ::popen(("timeout -k 10 240 " + command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

bool have_mpirun() { return fs::exists(SLUICE_MPIEXEC); }

// Open MPI keeps allocations of its dlopen'ed components until exit, and LeakSanitizer cannot
// name them once they are unloaded: in sanitized builds leak checking is off inside MPI jobs (and
// on everywhere else). ThreadSanitizer's lock-order check is off there too: Open MPI's TCP
// transport takes its own locks in both orders while starting up (in MPI_Init, not sluice's
// code); and a longer history lets it show the oneTBB frames of a worker's access, which
// tests/tsan.supp names. Other builds ignore the variables.
std::string mpirun(int processes, const std::string& program) {
  return "env ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" "
         "TSAN_OPTIONS=\"$TSAN_OPTIONS:detect_deadlocks=0:history_size=7\" " +
         std::string(SLUICE_MPIEXEC) + " --allow-run-as-root --oversubscribe -np " +
         std::to_string(processes) + " " + program;
}

// Every value of the "key: value" lines with this key, in output order.
std::vector<std::string> values(const std::string& output, const std::string& key) {
  std::vector<std::string> out;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(key + ": ", 0) == 0) out.push_back(line.substr(key.size() + 2));
  }
  return out;
}

// What each of `processes` workers printing `value` gives values().
std::vector<std::string> on_every_worker(int processes, const std::string& value) {
  return std::vector<std::string>(static_cast<size_t>(processes), value);
}

std::string bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  char text[16];
  std::snprintf(text, sizeof text, "%08x", u);
  return text;
}

TEST(MultiWorkerTest, CollectivesGiveIdenticalResultsOnEveryWorker) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  const JobResult r = run(mpirun(2, std::string(SLUICE_MULTI_WORKER_PROBE) + " collectives"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(values(r.output, "workers"), (std::vector<std::string>{"2", "2"}));
  EXPECT_EQ(values(r.output, "replicas_in_sync"), (std::vector<std::string>{"2", "2"}));
  auto chiefs = values(r.output, "chief_count");
  std::sort(chiefs.begin(), chiefs.end());
  EXPECT_EQ(chiefs, (std::vector<std::string>{"0", "1"}));
  // Worker 0's values plus worker 1's, in that order, bit for bit on both workers.
  std::string expected;
  for (int i = 0; i < 4; ++i) {
    const float w0 = 0.1f * 1.0f + 1e-7f * float(i) + 3.3e7f;
    const float w1 = 0.1f * 2.0f + 1e-7f * float(i);
    expected += bits(w0 + w1) + " ";
  }
  EXPECT_EQ(values(r.output, "float_sum"), (std::vector<std::string>{expected, expected}));
  EXPECT_EQ(values(r.output, "double_sum"), (std::vector<std::string>{"3 1", "3 1"}));
  EXPECT_EQ(values(r.output, "broadcast"), (std::vector<std::string>{"0 1 2", "0 1 2"}));
  EXPECT_EQ(values(r.output, "data_shard_0"), (std::vector<std::string>{"[0,1][4,5][8,9]"}));
  EXPECT_EQ(values(r.output, "data_shard_1"), (std::vector<std::string>{"[2,3][6,7][10,11]"}));
  EXPECT_EQ(values(r.output, "input_context_0"), (std::vector<std::string>{"2 0 2"}));
  EXPECT_EQ(values(r.output, "input_context_1"), (std::vector<std::string>{"2 1 2"}));
}

TEST(MultiWorkerTest, ThreeWorkersSumInWorkerOrderWithUnevenChunks) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  // 4 values over 3 workers: chunks of 1, 1 and 2 values, each summed by a different worker.
  const JobResult r = run(mpirun(3, std::string(SLUICE_MULTI_WORKER_PROBE) + " collectives"));
  ASSERT_EQ(r.status, 0) << r.output;
  std::string expected;
  for (int i = 0; i < 4; ++i) {
    float sum = 0.1f * 1.0f + 1e-7f * float(i) + 3.3e7f;
    for (int rank = 1; rank < 3; ++rank) sum += 0.1f * float(rank + 1) + 1e-7f * float(i);
    expected += bits(sum) + " ";
  }
  EXPECT_EQ(values(r.output, "float_sum"), (std::vector<std::string>(3, expected)));
  EXPECT_EQ(values(r.output, "double_sum"), (std::vector<std::string>(3, "6 1.5")));
  EXPECT_EQ(values(r.output, "broadcast"), (std::vector<std::string>(3, "0 1 2")));
  EXPECT_EQ(values(r.output, "replicas_in_sync"), (std::vector<std::string>(3, "3")));
  // Global batches of 4 over 3 workers split as over 3 mirrored replicas: 2, 2, 0 rows.
  EXPECT_EQ(values(r.output, "data_shard_2"), (std::vector<std::string>{"[][][]"}));
  EXPECT_EQ(values(r.output, "input_context_2"), (std::vector<std::string>{"3 2 3"}));
}

TEST(MultiWorkerTest, AWorkerThatStopsAnsweringFailsTheOthersNamingIt) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  // The probe's collective timeout is 5 s; worker 1 sleeps before its 4th collective.
  const JobResult r = run(mpirun(2, std::string(SLUICE_MULTI_WORKER_PROBE) + " hang 3"));
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.status, 124) << "the job hung:\n" << r.output;
  EXPECT_NE(r.output.find("error: Internal: MultiWorkerMirroredStrategy worker 0: worker(s) 1 "
                          "did not answer all_reduce_across_workers (collective #4) within 5 s"),
            std::string::npos)
      << r.output;
}

TEST(MultiWorkerTest, AWorkerThatDiesEndsTheJob) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  const JobResult r = run(mpirun(2, std::string(SLUICE_MULTI_WORKER_PROBE) + " die 3"));
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.status, 124) << "the job hung:\n" << r.output;
  // mpirun ends the job and names the process (job, rank 1) that exited.
  EXPECT_NE(r.output.find("exited with non-zero status"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(",1]"), std::string::npos) << r.output;
}

// Evaluation sharded over 2 and 3 workers equals one process's: each worker evaluates its share
// and the losses and metrics are reduced as sums and counts.
TEST(MultiWorkerTest, ShardedEvaluationEqualsOneProcessEvaluation) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  for (int processes : {2, 3}) {
    const JobResult r =
        run(mpirun(processes, std::string(SLUICE_MULTI_WORKER_PROBE) + " evaluate"));
    ASSERT_EQ(r.status, 0) << r.output;
    for (const std::string key : {"loss", "accuracy"}) {
      const std::vector<std::string> single = values(r.output, "single_" + key);
      const std::vector<std::string> sharded = values(r.output, "sharded_" + key);
      ASSERT_EQ(single.size(), static_cast<size_t>(processes)) << r.output;
      ASSERT_EQ(sharded.size(), static_cast<size_t>(processes)) << r.output;
      for (int w = 0; w < processes; ++w) {
        if (key == "accuracy") {
          EXPECT_EQ(sharded[w], single[w]) << processes << " workers";
        } else {
          // The same per-example losses, summed in float32 within other batches: equal to
          // float32 rounding.
          EXPECT_NEAR(std::stod(sharded[w]), std::stod(single[w]), 1e-6 * std::stod(single[w]))
              << processes << " workers";
        }
      }
    }
  }
}

// Each of two or three workers updating only its share of a large kernel and gathering the
// others' gives what every worker updating all of it gives, bit for bit: the losses (with the L2
// penalty summed over the shares), the weights and Adam's slots of every checkpoint, mid-training
// and final, with one and with two replicas per worker (whose copies of the weights stay equal).
// The update is sharded only when every worker allows it.
TEST(MultiWorkerTest, AShardedUpdateEqualsTheWholeUpdateBitForBit) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  // With three workers the order of each element's additions matters as well: the update that
  // adds up what the reduce-scatter brought must add in worker order, as the all-reduce does.
  for (const int processes : {2, 3}) {
    const JobResult r = run(mpirun(processes, std::string(SLUICE_MULTI_WORKER_PROBE) + " update"));
    ASSERT_EQ(r.status, 0) << r.output;
    // Three workers' shares of the input end after 4 steps.
    const int steps = processes == 2 ? 5 : 4;
    std::vector<std::string> checkpoints{"2", "4"};
    if (steps == 5) checkpoints.push_back("5");
    for (const std::string label : {"", "two_replicas_", "exchanged_"}) {
      const std::vector<std::string> sharded = values(r.output, label + "sharded_losses");
      ASSERT_EQ(sharded.size(), static_cast<size_t>(processes)) << r.output;
      EXPECT_EQ(std::count(sharded[0].begin(), sharded[0].end(), ' '), steps - 1) << sharded[0];
      EXPECT_EQ(sharded, on_every_worker(processes, sharded[0]));
      EXPECT_EQ(values(r.output, label + "whole_losses"), sharded) << label;
      const std::string replicas = label == "two_replicas_" ? "2, 0 differing" : "1, 0 differing";
      // On one host the workers read each other's gradients in place, unless told not to.
      const std::string shared = label == "exchanged_" ? "no" : "yes";
      for (const std::string run : {"sharded", "whole"}) {
        EXPECT_EQ(values(r.output, label + run + "_replicas"), on_every_worker(processes, replicas))
            << label << run;
        EXPECT_EQ(values(r.output, label + run + "_shared_gradients"),
                  on_every_worker(processes, shared))
            << label << run;
      }
      for (const std::string& step : checkpoints) {
        EXPECT_EQ(values(r.output, label + "checkpoint_" + step),
                  (std::vector<std::string>{"15 tensors, 0 differing"}))
            << label << r.output;
      }
    }
    EXPECT_EQ(values(r.output, "gradients_when_worker_1_allows"),
              on_every_worker(processes, "refused"));
    EXPECT_EQ(values(r.output, "gradients_when_worker_1_refuses"),
              on_every_worker(processes, "readable"));
  }
}

// Workers on one host read the shares of a tensor given to share_with_workers where the others
// wrote them, round after round, and gather their new values into it; a tensor too small to be
// divided is not moved, and no segment's name is left on the host. Without shared memory, asked for
// or for want of room on one worker, the same collectives give the same values.
TEST(MultiWorkerTest, WorkersOnOneHostReadEachOthersSharesInPlace) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  for (const int processes : {2, 3}) {
    const JobResult r = run(mpirun(processes, std::string(SLUICE_MULTI_WORKER_PROBE) + " share"));
    ASSERT_EQ(r.status, 0) << r.output;
    // When one worker cannot have shared memory, none shares it.
    for (const std::string label : {"", "exchanged_", "no_room_"}) {
      EXPECT_EQ(values(r.output, label + "shared"),
                on_every_worker(processes, label.empty() ? "yes" : "no"))
          << r.output;
      EXPECT_EQ(values(r.output, label + "values_changed_by_the_move"),
                on_every_worker(processes, "0"));
      EXPECT_EQ(values(r.output, label + "small_moved"), on_every_worker(processes, "0"));
      EXPECT_EQ(values(r.output, label + "names_left"), on_every_worker(processes, "0"));
      for (const std::string round : {"round_1", "round_2"}) {
        EXPECT_EQ(values(r.output, label + round),
                  on_every_worker(processes, "0 wrong parts, 0 wrong gathered"))
            << label << round;
      }
    }
  }
}

// Hooks that decide differently on different workers still act on every worker at one step. A
// saver by seconds whose clock runs ahead on worker 0 makes both workers save there (each takes
// part in a save, and the update is sharded), and a stop that worker 0 alone requests ends both
// workers' training at its step. And every worker begins the first step together.
TEST(MultiWorkerTest, WorkersSaveAndStopTogetherWhenOneWorkersHookDecides) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  const JobResult r = run(mpirun(2, std::string(SLUICE_MULTI_WORKER_PROBE) + " agree"));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<std::string> timed = values(r.output, "timed_saves_0");
  ASSERT_EQ(timed.size(), 1u) << r.output;
  EXPECT_EQ(values(r.output, "timed_saves_1"), timed);
  EXPECT_NE((" " + timed[0] + " ").find(" 3 "), std::string::npos)
      << "worker 0's clock made step 3 due: " << timed[0];
  const std::vector<std::string> stopped = values(r.output, "stopped_saves_0");
  ASSERT_EQ(stopped.size(), 1u) << r.output;
  EXPECT_EQ(values(r.output, "stopped_saves_1"), stopped);
  for (const std::string worker : {"0", "1"}) {
    EXPECT_EQ(values(r.output, "timed_last_step_" + worker), std::vector<std::string>{"6"});
    EXPECT_EQ(values(r.output, "stopped_last_step_" + worker), std::vector<std::string>{"2"});
  }
  // Nor does any worker begin its first step before every worker is ready for it: worker 0 waits
  // for worker 1's late input before its step clock starts.
  const std::vector<std::string> ready = values(r.output, "late_input_ready");
  const std::vector<std::string> chief = values(r.output, "first_step_0");
  ASSERT_EQ(ready.size(), 1u) << r.output;
  ASSERT_EQ(chief.size(), 1u) << r.output;
  EXPECT_GE(std::stoll(chief[0]), std::stoll(ready[0]));
}

// --- sluice train --strategy multiworker --------------------------------------------------------

class MultiWorkerTrainTest : public testing::TempDirTest {
 protected:
  // train/ and test/ splits of 28×28 grey PNGs in two classes: class 0 brighter on the left,
  // class 1 on the right, with a per-image ripple so images differ.
  void write_image_folder() {
    for (const char* split : {"train", "test"}) {
      const int count = std::string(split) == "train" ? 12 : 4;
      for (int label = 0; label < 2; ++label) {
        const fs::path dir = dir_ / "images" / split / (label == 0 ? "left" : "right");
        fs::create_directories(dir);
        for (int i = 0; i < count; ++i) {
          Tensor image(DType::kUInt8, {28, 28, 1});
          auto v = image.values<uint8_t>();
          for (int y = 0; y < 28; ++y) {
            for (int x = 0; x < 28; ++x) {
              const bool bright = label == 0 ? x < 14 : x >= 14;
              v[y * 28 + x] =
                  static_cast<uint8_t>((bright ? 160 : 40) + (x * 7 + y * 3 + i * 11) % 50);
            }
          }
          std::ofstream(dir / ("img" + std::to_string(i) + ".png"), std::ios::binary)
              << encode_png(image);
        }
      }
    }
  }

  std::string train_args(const std::string& model_dir) const {
    return " train --data " + path("images") +
           " --model estimator-convnet --optimizer sgd --lr 0.05 --batch 8 --steps 5 --seed 7 "
           "--model-dir " +
           model_dir;
  }

  static std::map<std::string, Tensor> checkpoint(const std::string& dir) {
    auto restored = CheckpointManager(dir, 0).restore_latest();
    EXPECT_TRUE(restored.has_value()) << "no checkpoint in " << dir;
    return restored ? restored->tensors : std::map<std::string, Tensor>{};
  }
};

TEST_F(MultiWorkerTrainTest, TwoWorkersReachTheWeightsOfTwoMirroredReplicas) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  write_image_folder();
  const JobResult mirrored = run(std::string(SLUICE_CLI) + train_args(path("mirrored")) +
                                 " --threads 2 --strategy mirrored:2");
  ASSERT_EQ(mirrored.status, 0) << mirrored.output;
  const JobResult workers = run(mpirun(2, std::string(SLUICE_CLI) + train_args(path("workers")) +
                                              " --threads 1 --strategy multiworker"));
  ASSERT_EQ(workers.status, 0) << workers.output;
  // Only the chief prints the report.
  EXPECT_EQ(values(workers.output, "Distribution").size(), 1u) << workers.output;
  EXPECT_NE(workers.output.find("MultiWorkerMirroredStrategy, 2 replica(s) in sync"),
            std::string::npos)
      << workers.output;

  // Each mirrored replica's own statistics ("replica_<r>/...") have no single-replica worker
  // counterpart, and one process's input position none among workers that each read a share;
  // everything else must agree.
  auto expected = checkpoint(path("mirrored"));
  std::erase_if(expected, [](const auto& entry) {
    return entry.first.rfind("replica_", 0) == 0 || entry.first == "input/state";
  });
  auto actual = checkpoint(path("workers"));
  std::erase_if(actual, [](const auto& entry) { return entry.first.rfind("input/", 0) == 0; });
  ASSERT_EQ(actual.size(), expected.size());
  int compared = 0;
  for (const auto& [key, want] : expected) {
    ASSERT_TRUE(actual.count(key)) << key;
    const Tensor& got = actual.at(key);
    ASSERT_EQ(got.shape(), want.shape()) << key;
    if (want.dtype() != DType::kFloat32) continue;
    const auto a = got.values<float>();
    const auto b = want.values<float>();
    for (size_t i = 0; i < b.size(); ++i) {
      ASSERT_NEAR(a[i], b[i], 1e-5f + 1e-4f * std::fabs(b[i])) << key << "[" << i << "]";
    }
    ++compared;
  }
  EXPECT_GT(compared, 4);
  EXPECT_EQ(actual.at("global_step").item<int64_t>(), 5);
  // Summaries come from one process (the chief): every event file names the same writer pid.
  std::set<std::string> writers;
  for (const auto& entry : fs::recursive_directory_iterator(path("workers"))) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("events.out.tfevents.", 0) != 0) continue;
    const size_t last = name.rfind('.');
    const size_t before = name.rfind('.', last - 1);
    writers.insert(name.substr(before + 1, last - before - 1));
  }
  EXPECT_EQ(writers.size(), 1u);
  // The test split is evaluated with the same weights: the same accuracy.
  const auto accuracy = [](const std::string& output) {
    const size_t at = output.find("accuracy ");
    return at == std::string::npos ? std::string() : output.substr(at, 15);
  };
  EXPECT_EQ(accuracy(workers.output), accuracy(mirrored.output));
}

// Two workers stopped mid-epoch and started again end with a straight run's training state, byte
// for byte: the chief's checkpoint holds both workers' input positions. Three workers cannot take
// those positions over: their shares differ.
TEST_F(MultiWorkerTrainTest, TwoWorkersResumeExactlyAndThreeAreRefused) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found";
  write_image_folder();
  // 24 training images in batches of 8: 3 steps an epoch; step 4 is inside the second, and runs
  // that end at steps 4 and 6 both run two epochs (the same input plan).
  auto job = [&](int processes, const std::string& dir, int max_steps) {
    return run(mpirun(processes, std::string(SLUICE_CLI) + " train --data " + path("images") +
                                     " --model estimator-convnet --optimizer sgd --lr 0.05 "
                                     "--batch 8 --seed 7 --threads 1 --strategy multiworker "
                                     "--save-checkpoints-steps 2 --max-steps " +
                                     std::to_string(max_steps) + " --model-dir " + path(dir)));
  };
  const JobResult straight = job(2, "straight", 6);
  ASSERT_EQ(straight.status, 0) << straight.output;
  const JobResult first = job(2, "resumed", 4);
  ASSERT_EQ(first.status, 0) << first.output;
  const JobResult again = job(2, "resumed", 6);
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_NE(again.output.find("Resuming from model.ckpt-4"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("the input continues from its saved position"), std::string::npos)
      << again.output;

  auto training_state = [&](const std::string& dir) {
    TensorMap tensors = read_checkpoint_file(path(dir + "/model.ckpt-6"));
    EXPECT_EQ(tensors.at("input/workers").item<int64_t>(), 2);
    std::erase_if(tensors, [](const auto& entry) { return entry.first.rfind("input/", 0) == 0; });
    return tensors;
  };
  const TensorMap want = training_state("straight");
  const TensorMap got = training_state("resumed");
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [key, tensor] : want) {
    ASSERT_TRUE(got.count(key)) << key;
    const Tensor& other = got.at(key);
    ASSERT_EQ(other.shape(), tensor.shape()) << key;
    EXPECT_EQ(std::memcmp(other.raw_data(), tensor.raw_data(), tensor.byte_size()), 0) << key;
  }

  const JobResult three = job(3, "resumed", 9);
  EXPECT_EQ(three.status, 1) << three.output;
  EXPECT_NE(three.output.find("holds the input positions of 2 worker(s) and this run has 3"),
            std::string::npos)
      << three.output;
}

}  // namespace
}  // namespace sluice
