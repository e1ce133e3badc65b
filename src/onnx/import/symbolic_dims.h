#pragma once
// Symbolic dimensions through import, optimization and export (internal to src/onnx).
// graphsub optimizes at one concrete value of each symbolic input dimension. To write the
// result back with the dimension symbolic, the importer also imports the model at a second
// value of it and records the output shapes of its IR nodes by key; re-instantiating a
// graph at that second value (instantiate_symbolic, onnx_model.h) then tells, for every
// tensor, which dimensions follow the symbolic one, and fails where a graph fixed its value.
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace graphsub {

// "name|op" of an IR node: how a node of an optimized graph is found among the imported ones.
std::string symbolic_key(const Node& n);

// Output shapes of each operator and weight of `g` whose key is unique in `g`.
std::map<std::string, std::vector<Shape>> shapes_by_key(const Graph& g);

}  // namespace graphsub
