// Generation split over ranks: two ranks (threads of this process standing in for the
// processes of an MPI job) write the same library as one process, byte for byte; a rerun over
// a run directory runs again only the shares that are missing; a run directory of other flags
// is refused. The MPI job itself is run by the CTest gen_mpi_two_ranks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <barrier>
#include <filesystem>
#include <thread>

#include "core/error.h"
#include "driver/generate_job.h"
#include "gen/shard_files.h"

namespace graphsub {
namespace {

namespace fs = std::filesystem;

// Ranks that are threads: a barrier and an all-gather over shared slots.
class ThreadRanks {
 public:
  explicit ThreadRanks(int n) : n_(n), sync_(n), slots_(static_cast<size_t>(n)) {}
  class Rank : public gen::Cluster {
   public:
    Rank(ThreadRanks& all, int rank) : all_(all), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return all_.n_; }
    void barrier() override { all_.sync_.arrive_and_wait(); }
    std::vector<std::string> all_gather(const std::string& mine) override {
      all_.slots_[static_cast<size_t>(rank_)] = mine;
      barrier();
      std::vector<std::string> got = all_.slots_;
      barrier();  // nobody writes a slot again before everyone has read them
      return got;
    }

   private:
    ThreadRanks& all_;
    int rank_;
  };

 private:
  int n_;
  std::barrier<> sync_;
  std::vector<std::string> slots_;
};

driver::GenerateJobOptions small_job(const fs::path& dir) {
  driver::GenerateJobOptions o;
  o.max_ops = 3;
  o.ops = "matmul,transpose,relu,concat,split,ewadd";
  o.params = {"act=none,relu", "axis=0,1"};
  o.pool = "x1:2x4:data,x2:2x4:data,w1:4x4:weight,w2:4x4:weight";
  o.axioms = std::string(GRAPHSUB_SOURCE_DIR) + "/specs/operators.axioms";
  o.threads = 1;
  o.output = (dir / "small.rules").string();
  return o;
}

// Runs `o` on `ranks` thread ranks; every rank's result, in rank order.
std::vector<driver::GenerateJobResult> run_jobs_on_ranks(driver::GenerateJobOptions o, int ranks) {
  ThreadRanks all(ranks);
  std::vector<driver::GenerateJobResult> results(static_cast<size_t>(ranks));
  std::vector<std::string> errors(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ThreadRanks::Rank me(all, r);
      driver::GenerateJobOptions mine = o;
      mine.cluster = &me;
      try {
        results[static_cast<size_t>(r)] = driver::run_generate_job(mine, null_reporter());
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors) EXPECT_EQ(e, "");
  return results;
}

// Every rank's library text, in rank order.
std::vector<std::string> run_on_ranks(driver::GenerateJobOptions o, int ranks) {
  std::vector<std::string> libraries;
  for (auto& r : run_jobs_on_ranks(std::move(o), ranks)) libraries.push_back(r.library);
  return libraries;
}

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / (name + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(GenRanks, TwoRanksWriteTheSameLibraryAsOneProcess) {
  fs::path dir = fresh_dir("graphsub_ranks_same_");
  driver::GenerateJobOptions o = small_job(dir);
  std::string alone = driver::run_generate_job(o, null_reporter()).library;
  std::vector<std::string> two = run_on_ranks(o, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NE(alone.find("(equality r-"), std::string::npos);
  EXPECT_EQ(two[0], alone);
  EXPECT_EQ(two[1], alone);
  EXPECT_FALSE(fs::exists(dir / "small.rules.run")) << "the run directory is removed when done";
  fs::remove_all(dir);
}

// No rank holds every class while proving: each decides its own share (rule_owner), and the
// library and the report of unproved candidates are still those of one process.
TEST(GenRanks, EachRankDecidesItsOwnShareOfTheClasses) {
  fs::path dir = fresh_dir("graphsub_ranks_share_");
  driver::GenerateJobOptions o = small_job(dir);
  driver::GenerateJobResult alone = driver::run_generate_job(o, null_reporter());
  std::vector<driver::GenerateJobResult> two = run_jobs_on_ranks(o, 2);
  ASSERT_EQ(two.size(), 2u);
  ASSERT_EQ(alone.result.ranks.size(), 1u);
  EXPECT_EQ(alone.result.ranks[0].classes, alone.result.classes);
  EXPECT_GT(alone.result.unproved.size(), 0u);
  for (const auto& r : two) {
    ASSERT_EQ(r.result.ranks.size(), 2u);
    EXPECT_EQ(r.result.classes, alone.result.classes);
    EXPECT_EQ(r.result.ranks[0].classes + r.result.ranks[1].classes, alone.result.classes);
    EXPECT_GT(r.result.ranks[0].classes, alone.result.classes / 4);
    EXPECT_GT(r.result.ranks[1].classes, alone.result.classes / 4);
    EXPECT_EQ(r.library, alone.library);
    EXPECT_EQ(r.unproved, alone.unproved);
    EXPECT_EQ(r.result.implied, alone.result.implied);
    EXPECT_EQ(r.result.not_tried, alone.result.not_tried);
    EXPECT_EQ(r.result.verifier_calls, alone.result.verifier_calls);
  }
  fs::remove_all(dir);
}

TEST(GenRanks, ARerunRunsOnlyTheMissingShares) {
  fs::path dir = fresh_dir("graphsub_ranks_resume_");
  driver::GenerateJobOptions o = small_job(dir);
  o.run_dir = (dir / "run").string();
  o.keep_run_dir = true;
  std::string first = run_on_ranks(o, 2)[0];
  ASSERT_TRUE(fs::exists(dir / "run" / "enum-0" / "shard.bin"));
  ASSERT_TRUE(fs::exists(dir / "run" / "classes-1"));
  // Rank 1 "died" before its shares were whole: they are gone.
  fs::remove_all(dir / "run" / "enum-1");
  fs::remove(dir / "run" / "classes-1");
  auto kept = fs::last_write_time(dir / "run" / "classes-0");
  std::string again = run_on_ranks(o, 2)[0];
  EXPECT_EQ(again, first);
  EXPECT_TRUE(fs::exists(dir / "run" / "classes-1")) << "the lost share is run again";
  EXPECT_EQ(fs::last_write_time(dir / "run" / "classes-0"), kept) << "the kept one is not";
  fs::remove_all(dir);
}

// Proof epochs of 20 rules (the small run makes a few hundred calls, in batches): each starts
// from fresh solver sessions, and each finished one is kept. A run that lost its later epochs
// (killed while proving) replays the kept ones and writes the same library.
TEST(GenRanks, ARunKilledWhileProvingResumesFromItsKeptEpochs) {
  fs::path dir = fresh_dir("graphsub_ranks_epochs_");
  driver::GenerateJobOptions o = small_job(dir);
  o.proof_epoch = 20;
  std::string alone = driver::run_generate_job(o, null_reporter()).library;
  o.run_dir = (dir / "run").string();
  o.keep_run_dir = true;
  std::string first = run_on_ranks(o, 2)[0];
  EXPECT_EQ(first, alone);
  ASSERT_TRUE(fs::exists(dir / "run" / "proofs-1"));
  auto kept = fs::last_write_time(dir / "run" / "proofs-0");
  for (int k = 1; fs::exists(dir / "run" / ("proofs-" + std::to_string(k))); ++k)
    fs::remove(dir / "run" / ("proofs-" + std::to_string(k)));
  std::string again = run_on_ranks(o, 2)[0];
  EXPECT_EQ(again, first);
  EXPECT_TRUE(fs::exists(dir / "run" / "proofs-1")) << "the lost epochs are proved again";
  EXPECT_EQ(fs::last_write_time(dir / "run" / "proofs-0"), kept) << "the kept one is replayed";
  fs::remove_all(dir);
}

TEST(GenRanks, ARunDirectoryOfOtherFlagsIsRefused) {
  fs::path dir = fresh_dir("graphsub_ranks_other_");
  driver::GenerateJobOptions o = small_job(dir);
  o.run_dir = (dir / "run").string();
  gen::make_dirs(o.run_dir);
  gen::write_file_whole(o.run_dir + "/run.txt", "graphsub generate --max-ops 2\nranks 1\n");
  try {
    driver::run_generate_job(o, null_reporter());
    FAIL() << "a run directory of another run was used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds a run of other flags"), std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace graphsub
