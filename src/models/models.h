#pragma once
// Built-in models, built with GraphBuilder. Weights carry deterministic pseudo-random data
// when with_data is true (the default), so every model can be executed and checked.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace graphsub {

// A small convolutional network used by `graphsub demo` and smoke tests.
Graph demo_model(bool with_data = true);

// The benchmark models of TASO's evaluation (batch 1; see docs/benchmarks.md, "Optimizer").
Graph resnet50(bool with_data = true);
Graph resnext50(bool with_data = true);
Graph nasnet_a(bool with_data = true);
Graph nasrnn(bool with_data = true, int64_t hidden = 512, int steps = 5);
struct BertConfig {
  int64_t batch = 16;  // sequences; rows of the input = batch * seq
  int64_t seq = 64;
  int64_t hidden = 1024;
  int64_t heads = 16;
  int layers = 8;
};
Graph bert(bool with_data = true, const BertConfig& config = {});
Graph inception_v3(bool with_data = true);
Graph squeezenet(bool with_data = true);
Graph vgg19(bool with_data = true);

// Names accepted by build_model, in a fixed order: the eight benchmark models, then "demo".
const std::vector<std::string>& model_names();
// Builds a model by name; throws Error listing the known names for an unknown one.
Graph build_model(std::string_view name, bool with_data = true);

}  // namespace graphsub
