// The isolated child that runs ONNX's shape inference (onnx/format/isolated_call.h): one
// child for every call, a crash or a hang turned into an Error naming it, and a new child for
// the call after.
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "onnx/format/isolated_call.h"
#include "onnx/format/shape_inference.h"

namespace graphsub {
namespace {

std::string echo_pid(const std::string& request) {
  if (request == "crash") std::raise(SIGSEGV);
  if (request == "hang") sleep(600);
  if (request == "throw") throw Error("the attribute is broken");
  if (request.size() > 1000) return request + request;  // large requests and replies
  return std::to_string(getpid()) + ":" + request;
}

std::string call(IsolatedServer& s, const std::string& request, unsigned timeout_s = 60) {
  return s.call(request, "test call", timeout_s);
}

// The Error a call ends in ("" when it returns).
std::string error_of(IsolatedServer& s, const std::string& request, unsigned timeout_s = 60) {
  try {
    call(s, request, timeout_s);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(IsolatedServer, OneChildServesEveryCall) {
  IsolatedServer s(echo_pid);
  EXPECT_EQ(s.child(), -1);  // forked on first use
  std::string a = call(s, "a");
  pid_t child = s.child();
  ASSERT_GT(child, 0);
  EXPECT_NE(child, getpid());
  EXPECT_EQ(a, std::to_string(child) + ":a");
  EXPECT_EQ(call(s, "b"), std::to_string(child) + ":b");
  EXPECT_EQ(s.child(), child);
}

TEST(IsolatedServer, LargeRequestsAndRepliesArriveWhole) {
  IsolatedServer s(echo_pid);
  std::string big(3 << 20, 'x');
  big[12345] = 'y';
  std::string reply = call(s, big);
  EXPECT_EQ(reply, big + big);
}

TEST(IsolatedServer, ACrashIsAnErrorAndTheNextCallGetsANewChild) {
  IsolatedServer s(echo_pid);
  call(s, "a");
  pid_t first = s.child();
  std::string crash = error_of(s, "crash");
  EXPECT_NE(crash.find("test call crashed"), std::string::npos) << crash;
  EXPECT_EQ(s.child(), -1);
  std::string b = call(s, "b");
  EXPECT_GT(s.child(), 0);
  EXPECT_NE(s.child(), first);
  EXPECT_EQ(b, std::to_string(s.child()) + ":b");
}

TEST(IsolatedServer, AHandlerErrorCarriesItsMessageAndKeepsTheChild) {
  IsolatedServer s(echo_pid);
  call(s, "a");
  pid_t child = s.child();
  EXPECT_EQ(error_of(s, "throw"), "test call: the attribute is broken");
  EXPECT_EQ(s.child(), child);
  EXPECT_EQ(call(s, "c"), std::to_string(child) + ":c");
}

TEST(IsolatedServer, AHangIsKilledAtTheTimeout) {
  IsolatedServer s(echo_pid);
  EXPECT_EQ(error_of(s, "hang", 1), "test call did not finish within 1 s");
  EXPECT_EQ(s.child(), -1);
  EXPECT_NE(call(s, "d").find(":d"), std::string::npos);
}

pid_t parent_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // pid (comm) state ppid ...: the command may hold spaces, so read after its ')'.
  std::istringstream rest(stat.substr(stat.rfind(')') + 1));
  std::string state;
  pid_t ppid = -1;
  rest >> state >> ppid;
  return ppid;
}

// Children are forked by one helper process forked at the start, never by the caller (who may
// run threads by then): a child that replaces a crashed one has the same parent as the first.
TEST(IsolatedServer, ChildrenAreForkedByTheHelperNotByTheCaller) {
  IsolatedServer s(echo_pid);
  call(s, "a");
  pid_t helper = parent_of(s.child());
  EXPECT_GT(helper, 1);
  EXPECT_NE(helper, getpid());
  EXPECT_EQ(parent_of(helper), getpid());
  error_of(s, "crash");
  call(s, "b");
  EXPECT_EQ(parent_of(s.child()), helper);
  error_of(s, "hang", 1);
  call(s, "c");
  EXPECT_EQ(parent_of(s.child()), helper);
}

// Another thread allocating all the while the children crash and are replaced: every call
// answers. (Forked by the caller, a child inherits whatever locks the caller's other threads
// hold at that instant; this churn did not stall children forked that way either, in 1,000
// replacements under AddressSanitizer, so it checks replacement under load, not that cause.)
TEST(IsolatedServer, ChildrenReplacedWhileAnotherThreadAllocatesAnswer) {
  IsolatedServer s(echo_pid);
  call(s, "a");  // the helper forked while this process has one thread
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    std::vector<std::string> keep(64);
    for (size_t i = 0; !stop; ++i) keep[i % keep.size()] = std::string(16 + i % 4096, 'x');
  });
  int answered = 0;
  for (int i = 0; i < 100; ++i) {
    EXPECT_NE(error_of(s, "crash", 10).find("crashed"), std::string::npos);
    answered += call(s, "b", 10).find(":b") != std::string::npos;
  }
  stop = true;
  churn.join();
  EXPECT_EQ(answered, 100);
}

// A helper that died (killed from outside) is replaced, and calls go on.
TEST(IsolatedServer, AKilledHelperIsReplaced) {
  IsolatedServer s(echo_pid);
  call(s, "a");
  pid_t helper = parent_of(s.child());
  ASSERT_GT(helper, 1);
  kill(helper, SIGKILL);
  error_of(s, "crash");  // the child's end is found with the helper gone
  EXPECT_NE(call(s, "d").find(":d"), std::string::npos);
  EXPECT_NE(parent_of(s.child()), helper);
}

TEST(ShapeInferenceService, InfersShapesInTheChild) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(2);
  tt->mutable_shape()->add_dim()->set_dim_value(3);
  auto* n = g->add_node();
  n->set_op_type("Transpose");
  n->add_input("x");
  n->add_output("y");
  g->add_output()->set_name("y");
  onnx::GraphProto types = infer_shapes_isolated(m, "tiny", 60);
  ASSERT_EQ(types.output_size(), 1);
  const auto& shape = types.output(0).type().tensor_type().shape();
  ASSERT_EQ(shape.dim_size(), 2);
  EXPECT_EQ(shape.dim(0).dim_value(), 3);
  EXPECT_EQ(shape.dim(1).dim_value(), 2);
  EXPECT_EQ(types.node_size(), 0);
}

}  // namespace
}  // namespace graphsub
