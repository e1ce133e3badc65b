"""The random inputs of tools/ort_worker.py: its numpy generator draws the values of its
one-at-a-time SplitMix32 (tools/ort_common.js's makeRng), bit for bit, across its blocks, so
that both workers and both ways of drawing feed a model the same inputs."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
sys.path.insert(0, TOOLS)
import ort_worker  # noqa: E402


def one_at_a_time(seed, n):
    r = ort_worker.Rng(seed)
    return np.array([r.next() for _ in range(n)], dtype=np.float64), r.s


@pytest.mark.parametrize("seed", [0, 1, 7, 123456789, 2**32 - 1])
def test_block_draws_equal_one_at_a_time_draws(seed):
    block = ort_worker.Rng.BLOCK
    for n in (0, 1, 5, block - 1, block, block + 3):
        want, state = one_at_a_time(seed, n)
        r = ort_worker.Rng(seed)
        got = r.uniform(n)
        assert got.dtype == np.float64
        assert np.array_equal(got, want), (seed, n)
        assert r.s == state, (seed, n)


def test_consecutive_draws_continue_the_sequence():
    r = ort_worker.Rng(42)
    parts = np.concatenate([r.uniform(3), r.uniform(ort_worker.Rng.BLOCK + 1), r.uniform(2)])
    want, state = one_at_a_time(42, parts.size)
    assert np.array_equal(parts, want)
    assert r.s == state


def test_values_are_those_of_the_node_worker():
    node = shutil.which("node")
    assert node, "Node.js is not installed (scripts/setup.sh installs it)"
    script = ("const {makeRng} = require(process.argv[1]); const r = makeRng(9);"
              "const v = []; for (let i = 0; i < 1000; ++i) v.push(r());"
              "console.log(JSON.stringify(v));")
    out = subprocess.run([node, "-e", script, os.path.join(TOOLS, "ort_common.js")],
                         check=True, capture_output=True, text=True).stdout
    assert np.array_equal(ort_worker.Rng(9).uniform(1000), np.array(json.loads(out)))
