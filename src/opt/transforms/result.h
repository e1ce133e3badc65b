#pragma once
// A failed match as a value (as MLIR's pattern rewriters return failure() with a reason): an
// applier that finds its match is not an application here says why, and the caller moves
// on. Exceptions stay for real errors. C++20 has no std::expected, hence Result.
#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "core/error.h"

namespace graphsub::opt {

// Why a match is not an application ("conv_add: input shapes [1,8,4,4] and [1,4,4,4]
// differ"). The reason is shared, so passing a remembered failure on copies no text.
class NoMatch {
 public:
  explicit NoMatch(std::string reason)
      : reason_(std::make_shared<const std::string>(std::move(reason))) {}
  const std::string& reason() const { return *reason_; }

 private:
  std::shared_ptr<const std::string> reason_;
};

// A value, or the NoMatch that says why there is none. Both convert implicitly, so that a
// function returning a Result returns either one as it is.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(NoMatch failure) : v_(std::move(failure)) {}
  explicit operator bool() const { return v_.index() == 0; }
  T& operator*() { return std::get<0>(v_); }
  const T& operator*() const { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  const NoMatch& failure() const { return std::get<1>(v_); }
  const std::string& reason() const { return failure().reason(); }

 private:
  std::variant<T, NoMatch> v_;
};

// What an applier returns: the replacement was written to its Builder, or why not.
struct Applied {};
using Outcome = Result<Applied>;

// Runs `build` (adding nodes to a graph: Graph::add, rules::instantiate) and turns the type
// checker's Error into a failed match with its message. The IR reports ill-typed nodes by
// throwing; this is the one place where that means "not an application".
template <class F>
auto type_checked(F&& build) -> Result<decltype(build())> {
  try {
    return build();
  } catch (const Error& e) {
    return NoMatch(e.what());
  }
}

}  // namespace graphsub::opt
