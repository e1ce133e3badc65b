#!/usr/bin/env python3
"""One decoding step of grouped-query attention over a key/value cache (a Llama-style layer:
32 query heads sharing 8 key/value heads of 64, one new token after --past cached ones) in each
form graphsub reads, timed in ONNX Runtime (level all, 1 intra-op thread, CPU): whether
introducing GroupQueryAttention is worth it there (issue 27, "priced where they run"). Every
form computes the same output (checked first).

Forms: the unfused graph as an exporter writes the step (heads moved out of the last axis,
the new key and value appended to the past with Concat, the shared heads repeated with
Unsqueeze, Expand and Reshape, then MatMul, Mul by the scale, Softmax, MatMul, and the heads
moved back), ONNX's Attention (opset 23, which shares the heads itself) over the same appended
caches, com.microsoft GroupQueryAttention (past and new key and value given to the node,
the lengths as constants), and com.microsoft MultiHeadAttention after the repeat (the key and
value given with their heads split out, as graphsub's rules write it). The query, new key and value and the past caches are inputs. Runs
are alternated, the order reversed every round, with the unfused graph loaded twice as an A/A
control; each sample is `--repeat` runs, the figures are medians.

  .venv/bin/python bench/ort_gqa.py [--past 512] [--rounds 30] [--repeat 20]
"""

import numpy as np
from onnx import helper, numpy_helper
from ort_forms import ORT_VERSION, alternated_medians, form_arguments, print_ratios, session

HEADS, KV_HEADS, HEAD = 32, 8, 64
GROUP = HEADS // KV_HEADS


def ints(name, v):
    return numpy_helper.from_array(np.array(v, np.int64), name)


def heads_out(x, heads, out):
    """[1, 1, heads * HEAD] -> [1, heads, 1, HEAD]."""
    return [helper.make_node("Reshape", [x, f"shape_{heads}"], [out + "_split"]),
            helper.make_node("Transpose", [out + "_split"], [out], perm=[0, 2, 1, 3])]


def appended(past):
    """The new key and value with their heads out, appended to the past caches."""
    nodes = heads_out("q", HEADS, "q4") + heads_out("k", KV_HEADS, "k4") + \
        heads_out("v", KV_HEADS, "v4")
    nodes += [helper.make_node("Concat", ["pk", "k4"], ["key"], axis=2),
              helper.make_node("Concat", ["pv", "v4"], ["value"], axis=2)]
    inits = [ints(f"shape_{HEADS}", [1, 1, HEADS, HEAD]),
             ints(f"shape_{KV_HEADS}", [1, 1, KV_HEADS, HEAD])]
    return nodes, inits


def heads_back(y4):
    return [helper.make_node("Transpose", [y4], ["y_heads"], perm=[0, 2, 1, 3]),
            helper.make_node("Reshape", ["y_heads", "y_shape"], ["y"])], \
        [ints("y_shape", [1, 1, HEADS * HEAD])]


def repeated(past):
    """The appended caches with each shared head repeated for its group of query heads."""
    nodes, inits = appended(past)
    length = past + 1
    for t in ("key", "value"):
        nodes += [helper.make_node("Unsqueeze", [t, "axis2"], [t + "_5d"]),
                  helper.make_node("Expand", [t + "_5d", "groups"], [t + "_expanded"]),
                  helper.make_node("Reshape", [t + "_expanded", "repeated"], [t + "_rep"])]
    inits += [ints("axis2", [2]), ints("groups", [1, KV_HEADS, GROUP, length, HEAD]),
              ints("repeated", [1, HEADS, length, HEAD])]
    return nodes, inits


def unfused(past):
    nodes, inits = repeated(past)
    nodes += [helper.make_node("Transpose", ["key_rep"], ["key_t"], perm=[0, 1, 3, 2]),
              helper.make_node("MatMul", ["q4", "key_t"], ["scores"]),
              helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
              helper.make_node("Softmax", ["scaled"], ["probs"], axis=-1),
              helper.make_node("MatMul", ["probs", "value_rep"], ["y4"])]
    back, back_inits = heads_back("y4")
    inits += [numpy_helper.from_array(np.array(HEAD ** -0.5, np.float32), "scale")] + back_inits
    return nodes + back, inits


def mha_repeated(past):
    """What graphsub's rules write (rules/ort_attention.rules, ort_mha_kv_masked without the
    mask): the repeat kept, the product in com.microsoft MultiHeadAttention taking the repeated
    key and value as [1, heads, length, HEAD] (BNSH)."""
    nodes, inits = repeated(past)
    nodes.append(helper.make_node("MultiHeadAttention", ["q", "key_rep", "value_rep"], ["y"],
                                  domain="com.microsoft", num_heads=HEADS))
    return nodes, inits


def onnx_attention(past):
    nodes, inits = appended(past)
    nodes.append(helper.make_node("Attention", ["q4", "key", "value"], ["y4"]))
    back, back_inits = heads_back("y4")
    return nodes + back, inits + back_inits


def ort_gqa(past):
    inits = [numpy_helper.from_array(np.array([past], np.int32), "seqlens_k"),
             numpy_helper.from_array(np.array(past + 1, np.int32), "total")]
    node = helper.make_node("GroupQueryAttention",
                            ["q", "k", "v", "pk", "pv", "seqlens_k", "total"],
                            ["y", "pk_out", "pv_out"], domain="com.microsoft",
                            num_heads=HEADS, kv_num_heads=KV_HEADS)
    return [node], inits


FORMS = {"unfused": unfused, "unfused (A/A)": unfused, "ONNX Attention-23": onnx_attention,
         "com.microsoft GroupQueryAttention": ort_gqa,
         "MultiHeadAttention after the repeat": mha_repeated}


def main():
    args = form_arguments(__doc__, "--past", 512)
    cache = [1, KV_HEADS, args.past, HEAD]
    names = ["q", "k", "v", "pk", "pv"]
    shapes = [[1, 1, HEADS * HEAD], [1, 1, KV_HEADS * HEAD], [1, 1, KV_HEADS * HEAD], cache, cache]
    sessions = {f: session(*FORMS[f](args.past), names, shapes, [1, 1, HEADS * HEAD])
                for f in FORMS}
    rng = np.random.default_rng(0)
    feed = {n: rng.standard_normal(s).astype(np.float32) for n, s in zip(names, shapes)}
    medians = alternated_medians(sessions, feed, args.rounds, args.repeat)
    print(f"ONNX Runtime {ORT_VERSION}, level all, 1 thread; {HEADS} query heads, {KV_HEADS} "
          f"key/value heads of {HEAD}, one token after {args.past}; {args.rounds} alternated "
          f"rounds of {args.repeat} runs, medians")
    print_ratios(medians, "us", 1e6)


if __name__ == "__main__":
    main()
