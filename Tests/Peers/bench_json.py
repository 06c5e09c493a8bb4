#!/usr/bin/env python3
"""Python's json.loads on an NDJSON file, the reference row of `nucleic-bench ingest`.

usage: bench_json.py FILE [--repeat N]

Reads FILE into memory, splits it into lines (bytes, as a pipe reader would get them), then times
`json.loads` over every line, N times, and prints the best pass as one JSON object:

  {"tool":"json.loads","python":"3.11.7","bytes":...,"lines":...,"seconds":...,"mbps":...}

`bytes` is the whole file (newlines included), the same numerator the Swift rows use; MB is 10^6
bytes. Only the loop over json.loads is timed, not reading or splitting the file. Empty lines
are skipped; a malformed line is timed and otherwise ignored.
"""

import argparse
import json
import platform
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    with open(args.file, "rb") as f:
        data = f.read()
    lines = [line for line in data.split(b"\n") if line]
    loads = json.loads

    best = None
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        for line in lines:
            try:
                loads(line)
            except ValueError:
                pass  # a malformed line costs its time, as in the Swift rows
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)

    report = {
        "tool": "json.loads",
        "python": platform.python_version(),
        "bytes": len(data),
        "lines": len(lines),
        "seconds": best,
        "mbps": len(data) / best / 1e6,
    }
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
