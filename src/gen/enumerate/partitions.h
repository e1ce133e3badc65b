#pragma once
// Set partitions of a graph's outputs into two or more blocks: a connected graph with several
// outputs may equal a disconnected graph whose pieces each compute one block of them
// (split(relu(concat(x, y))) against relu(x) and relu(y)).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace graphsub::gen {

// Every partition of {0..n-1} into at least two blocks, as block labels per element in
// restricted-growth form (the first element is in block 0, a new block gets the next label).
const std::vector<std::vector<uint8_t>>& output_partitions(size_t n);

}  // namespace graphsub::gen
