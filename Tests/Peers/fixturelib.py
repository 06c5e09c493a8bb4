"""The fixture format of DESIGN.md §6, shared by the recorders and the test tooling.

A fixture (and every session's raw.jsonl) is NDJSON: a header line
  {"fixture":1,"backend":"claude","cli":"2.1.327","argv":[...],"scenario":"..."}
then one line per message
  {"t":1.621,"dir":"out"|"in"|"err","line":"<the exact line as a JSON string>"}
"""
import json
import time


class FixtureWriter:
    """Collects messages with their time since start; `write` emits the fixture file."""

    def __init__(self, backend, cli, argv, scenario):
        self.header = {"fixture": 1, "backend": backend, "cli": cli, "argv": list(argv), "scenario": scenario}
        self.start = time.monotonic()
        self.records = []

    def add(self, direction, line):
        assert direction in ("out", "in", "err")
        self.records.append({"t": round(time.monotonic() - self.start, 3), "dir": direction, "line": line})

    def lines(self, normalize=None):
        """The fixture's lines; `normalize(header, records)` may rewrite volatile values first."""
        header, records = self.header, [dict(r) for r in self.records]
        if normalize is not None:
            header, records = normalize(header, records)
        out = [json.dumps(header, separators=(",", ":"))]
        out += [json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in records]
        return out

    def write(self, path, normalize=None):
        with open(path, "w", encoding="utf-8") as f:
            for line in self.lines(normalize):
                f.write(line + "\n")


def read_fixture(path):
    """(header, records) of a fixture file."""
    with open(path, encoding="utf-8") as f:
        header = json.loads(f.readline())
        records = [json.loads(l) for l in f if l.strip()]
    return header, records
