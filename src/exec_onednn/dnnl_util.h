#pragma once
// Small conversions between graphsub shapes/attributes and oneDNN descriptors (internal to the
// oneDNN executor).
#include <dnnl.hpp>
#include <string>

#include "core/tensor_type.h"

namespace graphsub::onednn {

using dnnl::memory;
using Dims = memory::dims;
using Tag = memory::format_tag;

// oneDNN has no 0-d memory: a scalar is stored as one element of shape [1].
Dims dims_of(const Shape& s);
// Row-major (plain) f32 descriptor of a logical shape (Dims and Shape are the same type).
memory::desc plain_desc(const Shape& s);
// Descriptor whose layout oneDNN chooses (blocked formats for conv, packed weights).
memory::desc any_desc(const Dims& d);
// Shape s left-padded with 1s to `rank` (numpy broadcasting alignment).
Dims pad_front(const Shape& s, size_t rank);
bool is_plain(const memory::desc& md);
// Fused activation of conv/matmul as an eltwise post-op ("none" appends nothing).
void append_act(dnnl::post_ops& ops, const std::string& act);
std::string desc_str(const memory::desc& md);  // "f32[1,64,56,56] nChw16c" style, for plans

}  // namespace graphsub::onednn
