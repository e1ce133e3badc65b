#include "dist/launched_cluster.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "core/error.h"

#ifdef GRAPHSUB_HAVE_MPI
#include <mpi.h>
#endif

namespace graphsub::dist {

bool launched_by_mpi() {
  // Open MPI's, PMIx's (Slurm, Open MPI 5) and MPICH's (PMI) launchers.
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(v)) return true;
  return false;
}

#ifdef GRAPHSUB_HAVE_MPI

namespace {

void check(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw Error(fmt::format("MPI: {} failed (error {})", call, rc));
}

// MPI_COMM_WORLD. Only the thread that set MPI up calls MPI (the generator's collectives run on
// its calling thread), so MPI_THREAD_FUNNELED is all it asks.
class MpiCluster : public gen::Cluster {
 public:
  MpiCluster() {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    });
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void barrier() override { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }
  std::vector<std::string> all_gather(const std::string& mine) override {
    if (mine.size() > static_cast<size_t>(INT32_MAX))
      throw Error(
          fmt::format("MPI: {} bytes to gather from one rank, more than 2 GiB", mine.size()));
    int n = static_cast<int>(mine.size());
    std::vector<int> sizes(static_cast<size_t>(size_));
    check(MPI_Allgather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    // One broadcast per rank, each straight into that rank's string: an all-gather into one
    // buffer would then be cut into strings, holding every rank's bytes twice (at N = 4 the
    // batches of the last proving pass, on every rank).
    std::vector<std::string> out(sizes.size());
    for (size_t r = 0; r < sizes.size(); ++r) {
      if (static_cast<int>(r) == rank_)
        out[r] = mine;
      else
        out[r].resize(static_cast<size_t>(sizes[r]));
      check(MPI_Bcast(out[r].data(), sizes[r], MPI_BYTE, static_cast<int>(r), MPI_COMM_WORLD),
            "MPI_Bcast");
    }
    return out;
  }

 private:
  int rank_ = 0, size_ = 1;
};

MpiCluster* job = nullptr;

}  // namespace

gen::Cluster& launched_cluster() {
  if (!launched_by_mpi()) return gen::single_process();
  static std::once_flag once;
  std::call_once(once, [] { job = new MpiCluster(); });  // lives until exit (MPI_Finalize)
  return *job;
}

void abort_job(const std::string& why) {
  if (!job || job->size() < 2) return;
  std::fprintf(stderr, "error on rank %d of %d: %s\n", job->rank(), job->size(), why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

#else

gen::Cluster& launched_cluster() {
  if (launched_by_mpi())
    throw Error(
        "started by an MPI launcher, but this graphsub was built without MPI (install "
        "libopenmpi-dev and build again)");
  return gen::single_process();
}

void abort_job(const std::string&) {}

#endif

}  // namespace graphsub::dist
