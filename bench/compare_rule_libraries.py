#!/usr/bin/env python3
"""Compares an old-style generated library (each direction a `(rule gen-N ...)`) with the
library graphsub loads now (each equality stored once, its directions derived at load).

    git show 6c6ca27:rules/default.rules > /tmp/old.rules    # the last positional library
    PYTHONPATH=build/python bench/compare_rule_libraries.py /tmp/old.rules rules/default.rules

Lists the directed rules the new file gives (graphsub.rules, i.e. the loader itself) and the
rules of the old file, both without names, and reports whether the two sequences are equal
(same rules, same order). Prints the counts and the first difference.
"""
import re
import sys

import graphsub


def without_name(text):
    # "(rule NAME" -> "(rule"; the rest of the text is the rule itself.
    return re.sub(r"^\(rule \S+", "(rule", text.strip())


def old_rules(path):
    text = open(path).read()
    blocks = re.split(r"\n(?=\(rule )", text)
    return [without_name(b) for b in blocks if b.startswith("(rule ")]


def main():
    old_path, new_path = sys.argv[1], sys.argv[2]
    old = old_rules(old_path)
    listed = graphsub.rules(new_path, builtin=False)
    new = [without_name(r["text"]) for r in listed]
    equalities = len({r["name"].split("~")[0] for r in listed})
    print(f"{old_path}: {len(old)} rules; {new_path}: {equalities} equalities, "
          f"{len(new)} rules at load")
    if old == new:
        print("identical: the same rules in the same order")
        return 0
    for i, (a, b) in enumerate(zip(old, new)):
        if a != b:
            print(f"first difference at rule {i + 1}:\n--- old\n{a}\n--- new\n{b}")
            break
    else:
        print(f"one list is a prefix of the other ({len(old)} vs {len(new)})")
    return 1


if __name__ == "__main__":
    sys.exit(main())
