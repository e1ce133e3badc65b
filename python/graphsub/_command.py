"""The `graphsub` command of an installed package: runs the C++ command line built into it."""

import os
import sys


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    binary = os.path.join(here, "bin", "graphsub")
    if not os.access(binary, os.X_OK):
        sys.exit(f"graphsub: the command line is missing from this installation ({binary})")
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
