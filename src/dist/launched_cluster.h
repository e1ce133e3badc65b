#pragma once
// The processes this program was started among: the ranks of an MPI job when an MPI launcher
// (mpirun, mpiexec, srun with PMIx) started it, else the cluster of one. MPI is set up on the
// first call and shut down when the program exits.
//
// MPI over a home-made protocol: it is what clusters run, reads a hostfile or a scheduler's
// allocation as they are, and needs nothing in Python. The generator asks it for little: a
// barrier, an all-gather, and an abort that stops every rank when one fails (so that no rank
// waits forever at a barrier that a failed one will never reach).
#include <string>

#include "gen/cluster.h"

namespace graphsub::dist {

// True when an MPI launcher started this process (its environment says so).
bool launched_by_mpi();

// The MPI job's ranks, or gen::single_process() when not launched by MPI. Throws Error when
// launched by MPI but built without it.
gen::Cluster& launched_cluster();

// Ends the whole MPI job (every rank) after this rank failed with `why`, printed on standard
// error with the rank. Returns (does nothing) when not in an MPI job of several ranks.
void abort_job(const std::string& why);

}  // namespace graphsub::dist
