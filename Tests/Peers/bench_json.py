#!/usr/bin/env python3
"""Python's json.loads (or orjson.loads) on an NDJSON file, the peer rows of `nucleic-bench ingest`.

usage: bench_json.py FILE [--repeat N] [--loader json|orjson]

Reads FILE into memory, splits it into lines (bytes, as a pipe reader would get them), then times
the loader's `loads` over every line, N times, and prints the best pass as one JSON object:

  {"tool":"json.loads","python":"3.11.7","bytes":...,"lines":...,"seconds":...,"mbps":...}

With `--loader orjson`, "tool" is "orjson.loads" and "version" is orjson's; orjson missing is exit
status 3 and a message on stderr (the benchmark then leaves the row out).

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
    parser.add_argument("--loader", choices=["json", "orjson"], default="json")
    args = parser.parse_args()
    version = None
    if args.loader == "orjson":
        try:
            import orjson
        except ImportError:
            sys.stderr.write("bench_json.py: orjson is not installed for %s\n" % sys.executable)
            return 3
        loads = orjson.loads
        errors = (orjson.JSONDecodeError, ValueError)
        version = orjson.__version__
    else:
        loads = json.loads
        errors = ValueError

    with open(args.file, "rb") as f:
        data = f.read()
    lines = [line for line in data.split(b"\n") if line]

    best = None
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        for line in lines:
            try:
                loads(line)
            except errors:
                pass  # a malformed line costs its time, as in the Swift rows
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)

    report = {
        "tool": args.loader + ".loads",
        "version": version,
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
