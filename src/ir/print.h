#pragma once
// Human-readable views of a graph: a text listing in topological order and Graphviz DOT.
#include <string>

#include "ir/graph.h"

namespace graphsub {

std::string to_text(const Graph& g);
std::string to_dot(const Graph& g, const std::string& title = "graphsub");

}  // namespace graphsub
