#!/usr/bin/env python3
"""One table from the rows of several sweeps of run_peers.py.

A sweep at published sizes takes hours, so it is run in parts (`--only`), often with different
graphsub commits. Each part keeps its rows in OUT/rows/NAME.json; this renders them as one
table, a row of a later folder replacing the earlier folders' row of the same entry. Each row
names the tool versions it was measured with (graphsub's binary by its hash), and the summary
counts the rows per graphsub version, so that a mixed table says so.

    python bench/peers/merge_rows.py OLD_OUT NEW_OUT [--out MERGED]
    python bench/peers/merge_rows.py --costs TOOLS_OUT   # wall time and memory only
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_peers  # noqa: E402  (the summary and the table, one home)


def load_rows(folders: list[str]) -> list[dict]:
    """The row of each entry from the last folder that has one, sorted by entry name."""
    rows: dict[str, dict] = {}
    for folder in folders:
        paths = sorted(glob.glob(os.path.join(folder, "rows", "*.json")))
        if not paths:
            raise SystemExit(f"merge_rows: {folder}: no rows (expected {folder}/rows/*.json)")
        for path in paths:
            try:
                with open(path) as f:
                    row = json.load(f)
            except (OSError, ValueError) as e:
                raise SystemExit(f"merge_rows: {path}: not a row ({e})")
            if "name" not in row or "tools" not in row:
                raise SystemExit(f"merge_rows: {path}: not a row (no name or tools)")
            rows[row["name"]] = row
    return sorted(rows.values(), key=lambda r: r["name"])


def versions_line(rows: list[dict]) -> str:
    """How many rows each graphsub binary measured."""
    count = collections.Counter((r.get("versions") or {}).get("graphsub", "unknown") for r in rows)
    return "Rows per graphsub binary: " + ", ".join(f"{v} ({n})" for v, n in count.most_common())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folders", nargs="+", help="run_peers.py output folders, oldest first")
    p.add_argument("--out", help="folder for the merged peers.json and peers.md")
    p.add_argument("--costs", action="store_true",
                   help="only the tools' wall time and peak memory (rows of a --runs 0 sweep)")
    args = p.parse_args(argv)
    rows = load_rows(args.folders)
    tools = [t for t in run_peers.TOOLS if any(t in r["tools"] for r in rows)]
    summary = run_peers.summarize(rows, tools)
    if args.costs:
        body = "\n".join(run_peers.wall_time_lines(rows, tools)
                         + run_peers.cost_lines(rows, tools)).lstrip("\n") + "\n"
    else:
        body = run_peers.markdown(rows, summary, tools)
    text = body + "\n" + versions_line(rows) + "\n"
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        result = {"folders": [os.path.abspath(f) for f in args.folders], "tools": tools,
                  "summary": summary, "families": run_peers.family_summaries(rows, tools),
                  "results": rows}
        run_peers.check_zoo.write_atomic(os.path.join(args.out, "peers.json"),
                                         json.dumps(result, indent=1))
        run_peers.check_zoo.write_atomic(os.path.join(args.out, "peers.md"), text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
