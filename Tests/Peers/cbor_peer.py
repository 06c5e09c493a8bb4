#!/usr/bin/env python3
"""CBOR interop peer for NucleicWireTests: cbor2 (the pinned PyPI package) on the other side.

Reads requests on stdin, one per line, and writes one JSON answer per line on stdout:

  decode <hex>     -> {"ok": true, "value": <description>, "canonical": "<hex>"}
                      cbor2 decodes the bytes; "canonical" is cbor2.dumps(value, canonical=True)
  encode <json>    -> {"ok": true, "hex": "<hex>", "canonical": "<hex>"}
                      <json> is a description; "hex" is cbor2's default encoding (floats as
                      doubles, map entries in order), "canonical" its canonical one (shortest
                      floats, map keys sorted length-first)
  anything failing -> {"ok": false, "error": "<message>"}

A description keeps everything a CBOR value has, with no JSON number in it:
  ["int", "<decimal>"]        any integer          ["float", "<16 hex digits: the double's bits>"]
  ["bytes", "<hex>"]          ["text", "<string>"] ["array", [d, ...]]
  ["map", [[k, v], ...]]      in order             ["tag", "<decimal>", d]
  ["bool", true|false]        ["null"]             ["undefined"]
"""
import json
import struct
import sys

import cbor2


def describe(value):
    if isinstance(value, bool):  # before int: bool is an int in Python
        return ["bool", value]
    if isinstance(value, int):
        return ["int", str(value)]
    if isinstance(value, float):
        return ["float", struct.pack(">d", value).hex()]
    if isinstance(value, str):
        return ["text", value]
    if isinstance(value, (bytes, bytearray)):
        return ["bytes", bytes(value).hex()]
    if isinstance(value, (list, tuple)):
        return ["array", [describe(v) for v in value]]
    if isinstance(value, (dict, cbor2.frozendict)):
        return ["map", [[describe(k), describe(v)] for k, v in value.items()]]
    if isinstance(value, cbor2.CBORTag):
        return ["tag", str(value.tag), describe(value.value)]
    if value is None:
        return ["null"]
    if value is cbor2.undefined:
        return ["undefined"]
    raise ValueError(f"cbor2 produced {type(value).__name__}, which has no description: {value!r}")


def build(description, as_key=False):
    kind = description[0]
    if kind == "int":
        return int(description[1])
    if kind == "float":
        return struct.unpack(">d", bytes.fromhex(description[1]))[0]
    if kind == "text":
        return description[1]
    if kind == "bytes":
        return bytes.fromhex(description[1])
    if kind == "array":
        items = [build(d, as_key) for d in description[1]]
        return tuple(items) if as_key else items
    if kind == "map":
        entries = {build(k, True): build(v, as_key) for k, v in description[1]}
        if len(entries) != len(description[1]):
            raise ValueError("map keys collide in Python (1 == 1.0 == True)")
        return cbor2.frozendict(entries) if as_key else entries
    if kind == "tag":
        return cbor2.CBORTag(int(description[1]), build(description[2], as_key))
    if kind == "bool":
        return bool(description[1])
    if kind == "null":
        return None
    if kind == "undefined":
        return cbor2.undefined
    raise ValueError(f"unknown description kind {kind!r}")


def answer(line):
    command, _, argument = line.partition(" ")
    if command == "decode":
        value = cbor2.loads(bytes.fromhex(argument))
        return {"ok": True, "value": describe(value), "canonical": cbor2.dumps(value, canonical=True).hex()}
    if command == "encode":
        value = build(json.loads(argument))
        return {"ok": True, "hex": cbor2.dumps(value).hex(), "canonical": cbor2.dumps(value, canonical=True).hex()}
    raise ValueError(f"unknown command {command!r}")


def main():
    sys.stdout.reconfigure(encoding="utf-8")
    for line in sys.stdin:
        line = line.rstrip("\n")
        if not line:
            continue
        try:
            result = answer(line)
        except Exception as error:  # every failure is an answer: the test wants one line per request
            result = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        print(json.dumps(result, ensure_ascii=False), flush=False)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
