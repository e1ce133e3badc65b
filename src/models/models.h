#pragma once
// Built-in models, built with GraphBuilder.
#include <string>
#include <vector>

#include "ir/graph.h"

namespace graphsub {

// A small convolutional network used by `graphsub demo` and smoke tests.
Graph demo_model(bool with_data = true);

}  // namespace graphsub
