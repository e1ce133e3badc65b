#pragma once
// The one place that talks to ONNX Runtime: a long-lived worker process, tools/ort_worker.js
// under Node.js (npm's onnxruntime-node) or tools/ort_worker.py under Python (PyPI's
// onnxruntime), both speaking the protocol of docs/ort-worker.md, driven over a pipe with one
// JSON request and one JSON reply per line. Sessions stay loaded between requests, so models
// can be timed against each other in one process, alternated run by run.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace graphsub::ort {

struct WorkerOptions {
  // The program that runs the script: Node.js or a Python (looked up on PATH).
  std::string interpreter = "node";
  // The worker script as the caller resolved it (driver/data_paths.h, the one lookup);
  // empty: the worker cannot start, and says so.
  std::string script;
  // A request that gets no reply in this time ends the worker with an error naming it (a
  // wedged runtime must not hang graphsub).
  std::chrono::seconds reply_timeout{300};
};

// The version of docs/ort-worker.md this client speaks (the PROTOCOL of both worker scripts).
inline constexpr int kWorkerProtocol = 1;

class Worker {
 public:
  // Starts the worker and greets it; throws Error naming what is missing (the interpreter,
  // the script, the ONNX Runtime package) when it cannot run.
  explicit Worker(const WorkerOptions& opts = {});
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Sends one request and returns its reply; throws Error with the worker's message when the
  // reply says "ok": false, or when the worker died or timed out.
  nlohmann::json call(const nlohmann::json& request);

  const std::string& runtime_version() const { return version_; }
  // OpenVINO's version where the worker can load models in it too (the Python worker with
  // the openvino package beside it; "load" with "runtime": "openvino"), else "".
  const std::string& openvino_version() const { return openvino_; }

 private:
  std::string read_line();
  // How the worker ended once its pipe closed: a crash by signal (ONNX Runtime failing on a
  // model), or an exit status. Reaps it, waiting a moment for it to finish.
  std::string how_it_ended();
  void stop();

  WorkerOptions opts_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string buffer_, version_, openvino_;
};

// Starts a worker, or returns nullptr with the reason in *why_not (the caller falls back to
// another target and says so).
std::unique_ptr<Worker> try_start_worker(std::string* why_not, const WorkerOptions& opts = {});

}  // namespace graphsub::ort
