#pragma once
// The processes one generation runs on, as the generator sees them: a rank among `size`
// processes, a barrier and an all-gather of bytes. The generator knows no distributed engine;
// src/dist implements this over MPI, and one process is the cluster of one (the default).
//
// Every rank runs the same pipeline on the same options. Enumeration and classification are
// split between the ranks (root tasks and fingerprint ranges), their results exchanged through
// the run directory. Each rank then holds and decides the classes it owns (prove/rule_owner.h);
// the rules sent to the prover are gathered into one batch in key order, checked by verifier
// lane and their verdicts all-gathered, so every rank keeps the same verdict book and the
// library does not depend on the number of ranks.
#include <string>
#include <vector>

namespace graphsub::gen {

class Cluster {
 public:
  virtual ~Cluster() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Collective: returns when every rank has called it.
  virtual void barrier() = 0;
  // Collective: every rank's `mine`, in rank order.
  virtual std::vector<std::string> all_gather(const std::string& mine) = 0;
};

// The cluster of one process.
Cluster& single_process();

}  // namespace graphsub::gen
