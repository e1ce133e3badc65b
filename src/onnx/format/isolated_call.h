#pragma once
// Runs a function in a child process. ONNX 1.12's shape inference dereferences malformed
// attributes of some operators (found by fuzzing: a Conv with a broken kernel_shape crashes
// convPoolShapeInference); running it in a forked child turns such a crash, or a hang, into an
// Error naming what failed, instead of taking graphsub down with it.
#include <functional>
#include <string>

namespace graphsub {

// Returns the bytes `fn` returned in the child. Throws Error naming `what` when `fn` throws
// (with its message), when the child crashes or is killed, or after `timeout_s` seconds.
std::string run_isolated(const std::function<std::string()>& fn, const std::string& what,
                         unsigned timeout_s);

}  // namespace graphsub
