#pragma once
// Running a long C++ job from Python: on a worker thread, while the Python thread waits with
// the GIL released and, every 50 ms, looks for Ctrl-C (PyErr_CheckSignals) and calls the
// caller's progress callback with the job's latest progress. Ctrl-C or a callback that raises
// cancels the job (its next Reporter::progress() throws Cancelled; the job's loops call it
// about once a second or more), waits for it to stop, and raises that Python exception.
#include <pybind11/pybind11.h>

#include <functional>

#include "ir/report.h"

namespace graphsub::python {

// The job's warnings (Reporter::warn) become Python UserWarnings once it ends; its info
// lines are dropped (the results carry that data).
void run_interruptible(const std::function<void(Reporter&)>& job, const pybind11::object& progress);

}  // namespace graphsub::python
