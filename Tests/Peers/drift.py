#!/usr/bin/env python3
"""The drift gate: judges a release of Claude Code or Codex against the pinned one (docs/DRIFT.md).

Usage:
  drift.py claude VERSION|latest [--against DIR] [--out DIR] [--report FILE]
  drift.py codex VERSION|latest  [--against DIR] [--out DIR] [--report FILE]
  drift.py latest                 the newest release of each on PyPI, judged when it is not the pin
  drift.py compare --backend claude|codex --old DIR --new DIR [--old-schema DIR --new-schema DIR] [--report FILE]

VERSION is the PyPI package's version: claude-agent-sdk (which bundles Claude Code) or
openai-codex-cli-bin. The release is installed once into a virtualenv cached under
~/.cache/nucleic/drift/<package>-<version>/, every fixture scenario is re-recorded with it against
the mock model APIs (record_claude.py / record_codex.py), and the recordings are compared with
the pinned release's fixtures (Fixtures/<backend>, or --against):

  (a) the wire shape: every message kind (at every level: type/subtype, stream event, content
      block, delta, item, method) and its key paths with their JSON types, fingerprinted; new and
      removed kinds, fields and identifier values (tools, capabilities, commands, models, ...);
      for Codex also `codex app-server generate-json-schema`, diffed;
  (b) the normalized events of each scenario, event by event, through the real codec
      (`nucleic events`);
  (c) the old recordings' host lines replayed against the new recordings (`nucleic replay-agent`):
      does the new CLI expect what the host sent the old one?

`compare` does only the comparison, of two folders of recordings (the gate's own test drives it
on doctored recordings). The report is Markdown, on stdout and in --report.

Exit status: 0 compatible; 3 compatible, with new information Nucleic ignores (named);
4 broken (named); 5 the gate could not judge (an install, a recording, an extraction failed: it
says what); 2 usage. Anything else is a failure of the gate itself.
"""
import argparse
import collections
import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import fixturelib  # noqa: E402

COMPATIBLE, IGNORED, BROKEN, CANNOT_JUDGE, USAGE = 0, 3, 4, 5, 2
VERDICTS = {COMPATIBLE: "COMPATIBLE", IGNORED: "COMPATIBLE, WITH NEW INFORMATION IGNORED", BROKEN: "BROKEN"}

PACKAGES = {
    "claude": {"package": "claude-agent-sdk", "binary": "claude_agent_sdk/_bundled/claude", "name": "Claude Code",
               "recorder": "record_claude.py", "codec": ["ClaudeCodec"]},
    "codex": {"package": "openai-codex-cli-bin", "binary": "codex_cli_bin/bin/codex", "name": "Codex",
              "recorder": "record_codex.py", "codec": ["CodexCodec"]},
}

# Objects whose keys are data (model names, question texts), not fields.
MAP_KEYS = {"modelUsage", "answers"}
# Event fields whose values are free text or measurements: a change is reported, not judged.
FREE_FIELDS = {"text", "message", "result", "output", "model", "tools", "input", "usage", "costUSD", "durationMS",
               "reason", "preview", "cwd", "raw", "delta", "diff", "nativeSessionID", "permissionMode"}
IDENTIFIER = re.compile(r"^[A-Za-z0-9_.:@/+-]{1,80}$")


class CannotJudge(Exception):
    """Something the gate needs could not be had: the run ends with exit 5, saying what."""


# ---------------------------------------------------------------------------------------------
# Reading recordings


def load_folder(folder):
    """{scenario file name: (header, records)} of a folder of fixtures; loud when empty or unreadable."""
    if not os.path.isdir(folder):
        raise CannotJudge("no folder of recordings at %s" % folder)
    out = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".jsonl"):
            continue
        path = os.path.join(folder, name)
        try:
            out[name[:-6]] = fixturelib.read_fixture(path)
        except (ValueError, OSError) as e:
            raise CannotJudge("cannot read %s: %s" % (path, e))
    if not out:
        raise CannotJudge("no recordings (*.jsonl) in %s" % folder)
    return out


def cli_versions(fixtures):
    versions = sorted({h.get("cli", "?") for h, _ in fixtures.values()})
    return versions


# ---------------------------------------------------------------------------------------------
# (a) The wire shape


def host_requests(records, backend):
    """The host's request ids and what they asked, so that replies can be named after them."""
    asked = {}
    for r in records:
        if r["dir"] != "in":
            continue
        try:
            m = json.loads(r["line"])
        except ValueError:
            continue
        if not isinstance(m, dict):
            continue
        if backend == "claude" and m.get("type") == "control_request":
            asked[m.get("request_id")] = (m.get("request") or {}).get("subtype", "?")
        elif backend == "codex" and "method" in m and "id" in m:
            asked[json.dumps(m["id"])] = m["method"]
    return asked


def top_kind(m, backend, asked):
    """The message's kind: its native discriminators, as a path."""
    if not isinstance(m, dict):
        return "(JSON that is not an object)"
    if backend == "claude":
        t = m.get("type")
        if not isinstance(t, str):
            return "(no type)"
        if t in ("system", "result"):
            return "%s/%s" % (t, m.get("subtype", "?"))
        if t == "stream_event":
            return "stream_event/%s" % ((m.get("event") or {}).get("type", "?"))
        if t == "control_request":
            return "control_request/%s" % ((m.get("request") or {}).get("subtype", "?"))
        if t == "control_response":
            resp = m.get("response") or {}
            to = asked.get(resp.get("request_id"))
            return "control_response/%s" % resp.get("subtype", "?") + (" (to %s)" % to if to else "")
        return t
    method = m.get("method")
    if isinstance(method, str):
        return ("request %s" if "id" in m else "notification %s") % method
    to = asked.get(json.dumps(m.get("id")), "?")
    return ("error reply to %s" if "error" in m else "reply to %s") % to


def json_type(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def walk(value, path, fields, kinds, vocab):
    """Collects key paths (with JSON types), sub-kinds (objects carrying a `type`) and identifier
    vocabularies (arrays of short identifiers, or of objects named by `name` / `value`)."""
    if isinstance(value, dict):
        t = value.get("type")
        if isinstance(t, str) and path:
            path = "%s<%s>" % (path, t)
            kinds.add(path)
        for k, v in value.items():
            key = "*" if path.split(".")[-1].split("<")[0].rstrip("[]") in MAP_KEYS else k
            sub = "%s.%s" % (path, key) if path else key
            fields.add("%s (%s)" % (sub, json_type(v)))
            walk(v, sub, fields, kinds, vocab)
    elif isinstance(value, list):
        sub = path + "[]"
        names = []
        for item in value:
            if isinstance(item, str) and IDENTIFIER.match(item):
                names.append(item)
            elif isinstance(item, dict) and isinstance(item.get("name") or item.get("value"), str):
                names.append(item.get("name") or item.get("value"))
            walk(item, sub, fields, kinds, vocab)
        if names and len(names) == len(value):
            vocab[sub].update(names)


class Shape:
    """The wire shape of a set of recordings: per kind, its key paths, sub-kinds and vocabularies."""

    def __init__(self, fixtures, backend):
        self.fields = collections.defaultdict(set)
        self.subkinds = collections.defaultdict(set)
        self.vocab = collections.defaultdict(lambda: collections.defaultdict(set))
        self.scenarios = collections.defaultdict(set)
        self.where = collections.defaultdict(set)  # (kind, field or sub-kind) -> scenarios
        self.counts = collections.defaultdict(collections.Counter)
        self.non_json = collections.defaultdict(list)
        self.stderr = collections.defaultdict(list)
        for scenario, (_, records) in fixtures.items():
            asked = host_requests(records, backend)
            for r in records:
                if r["dir"] == "err":
                    self.stderr[scenario].append(r["line"])
                if r["dir"] != "out":
                    continue
                try:
                    m = json.loads(r["line"])
                except ValueError:
                    self.non_json[scenario].append(r["line"])
                    continue
                kind = top_kind(m, backend, asked)
                self.scenarios[kind].add(scenario)
                self.counts[scenario][kind] += 1
                fields, subkinds = set(), set()
                walk(m, "", fields, subkinds, self.vocab[kind])
                self.fields[kind] |= fields
                self.subkinds[kind] |= subkinds
                for f in fields | subkinds:
                    self.where[(kind, f)].add(scenario)

    def kinds(self):
        return set(self.fields)

    def fingerprint(self, kind=None):
        kinds = [kind] if kind else sorted(self.fields)
        h = hashlib.sha256()
        for k in kinds:
            h.update(k.encode())
            for f in sorted(self.fields[k]):
                h.update(b"\0" + f.encode())
        return h.hexdigest()[:12]


# ---------------------------------------------------------------------------------------------
# Codex: the app-server's JSON schema


def schema_facts(folder):
    """Every property, enum value and const of a schema bundle, keyed by definition."""
    facts = set()
    if not folder or not os.path.isdir(folder):
        raise CannotJudge("no JSON schema folder at %s" % folder)

    def visit(node, definition, path):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("definitions", "$defs") and isinstance(v, dict):
                    for name, sub in v.items():
                        visit(sub, name, "")
                elif k == "properties" and isinstance(v, dict):
                    for prop, sub in v.items():
                        facts.add("%s: property %s" % (definition, (path + "." + prop).lstrip(".")))
                        visit(sub, definition, path + "." + prop)
                elif k == "enum" and isinstance(v, list):
                    for value in v:
                        facts.add("%s: %s value %s" % (definition, path.lstrip(".") or "enum", json.dumps(value)))
                elif k == "const":
                    facts.add("%s: %s const %s" % (definition, path.lstrip(".") or "value", json.dumps(v)))
                elif k in ("description", "title", "examples", "default"):
                    continue
                else:
                    visit(v, definition, path)
        elif isinstance(node, list):
            for item in node:
                visit(item, definition, path)

    count = 0
    for root, _, files in os.walk(folder):
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            count += 1
            try:
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    visit(json.load(f), name[:-5], "")
            except ValueError as e:
                raise CannotJudge("the schema file %s is not JSON: %s" % (os.path.join(root, name), e))
    if count == 0 or not facts:
        raise CannotJudge("the JSON schema in %s is empty" % folder)
    return facts


def generate_schema(codex, out):
    shutil.rmtree(out, ignore_errors=True)
    home = tempfile.mkdtemp(prefix="nucleic-drift-home-")
    try:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "CODEX_HOME": home}
        p = subprocess.run([codex, "app-server", "generate-json-schema", "--experimental", "--out", out],
                           env=env, capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if p.returncode != 0 or not os.path.isdir(out):
        raise CannotJudge("`%s app-server generate-json-schema` failed (exit %s): %s" % (codex, p.returncode, p.stderr.strip()[-500:]))
    return out


# ---------------------------------------------------------------------------------------------
# (b) Events, through the real codec


def find_nucleic(arg):
    for c in (arg, os.environ.get("NUCLEIC_BIN"), os.path.join(REPO, ".build", "debug", "nucleic")):
        if c and os.path.exists(c):
            return c
    raise CannotJudge("no nucleic binary: build it (`swift build --product nucleic`) or pass --nucleic")


def events_of(nucleic, path):
    """The normalized events of a recording: `nucleic events`, without seq, ts and random ids."""
    p = subprocess.run([nucleic, "events", path], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise CannotJudge("`nucleic events %s` failed (exit %d): %s" % (path, p.returncode, p.stderr.strip()[-500:]))
    events, ids = [], {}
    for line in p.stdout.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            raise CannotJudge("`nucleic events %s` printed a line that is not JSON: %r" % (path, line[:200]))
        e.pop("seq", None)
        e.pop("ts", None)
        approval = e.get("approval")
        if isinstance(approval, dict):
            approval.pop("createdAt", None)
            if "id" in approval:
                approval["id"] = ids.setdefault(approval["id"], "approval-%d" % (len(ids) + 1))
        if "approvalID" in e:
            e["approvalID"] = ids.setdefault(e["approvalID"], "approval-%d" % (len(ids) + 1))
        events.append(e)
    return events


def signature(e):
    """What identifies an event when aligning two sequences; the rest is compared after."""
    kind = e.get("kind")
    keys = {"toolCallStarted": ("toolCallID", "name", "toolKind"), "toolCallCompleted": ("toolCallID", "status"),
            "toolCallInputDelta": ("toolCallID",), "toolCallOutputDelta": ("toolCallID",),
            "approvalResolved": ("approvalID",), "approvalWithdrawn": ("approvalID",),
            "runFinished": ("isError", "stopReason"), "notice": ("level", "code"), "error": ("code",),
            "assistantText": ("isPartial",), "reasoning": ("isPartial",)}.get(kind, ())
    sig = [kind] + [str(e.get(k)) for k in keys]
    if kind == "approvalRequested":
        a = e.get("approval") or {}
        sig += [a.get("id"), a.get("toolName"), a.get("risk")]
    return "|".join(str(s) for s in sig)


def brief(e):
    s = json.dumps(e, ensure_ascii=False, sort_keys=True)
    return s if len(s) <= 160 else s[:157] + "..."


def field_changes(a, b, path=""):
    """(path, old, new) of the differing leaves of two JSON values."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in list(a) + [k for k in b if k not in a]:
            out += field_changes(a.get(k, KeyError), b.get(k, KeyError), (path + "." + k).lstrip("."))
        return out
    return [] if a == b else [(path, a, b)]


def compare_events(old, new):
    """Broken and informational differences of one scenario's events; unknown events apart."""
    broken, changed = [], []
    unknown_old = [e.get("nativeKind") or "(unnamed)" for e in old if e.get("kind") == "unknown"]
    unknown_new = [e.get("nativeKind") or "(unnamed)" for e in new if e.get("kind") == "unknown"]
    old = [e for e in old if e.get("kind") != "unknown"]
    new = [e for e in new if e.get("kind") != "unknown"]
    sm = difflib.SequenceMatcher(a=[signature(e) for e in old], b=[signature(e) for e in new], autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            for offset, (x, y) in enumerate(zip(old[i1:i2], new[j1:j2])):
                for path, a, b in field_changes(x, y):
                    where = "event %d (%s) %s" % (j1 + offset + 1, x.get("kind"), path)
                    if b is KeyError:
                        broken.append("%s is no longer set (was %s)" % (where, json.dumps(a, ensure_ascii=False)[:120]))
                    elif a is KeyError:
                        changed.append("%s is new: %s" % (where, json.dumps(b, ensure_ascii=False)[:120]))
                    elif path.split(".")[0] in FREE_FIELDS or path.split(".")[:2] in (["approval", "input"], ["approval", "reason"]):
                        changed.append("%s: %s → %s" % (where, json.dumps(a, ensure_ascii=False)[:80], json.dumps(b, ensure_ascii=False)[:80]))
                    else:
                        broken.append("%s changed: %s → %s" % (where, json.dumps(a, ensure_ascii=False)[:80], json.dumps(b, ensure_ascii=False)[:80]))
            continue
        for e in old[i1:i2]:
            (changed if e.get("kind") == "notice" else broken).append("event no longer produced: %s" % brief(e))
        for e in new[j1:j2]:
            if e.get("kind") == "error":
                broken.append("new error event: %s" % brief(e))
            else:
                (changed if e.get("kind") == "notice" else broken).append("new event: %s" % brief(e))
    return broken, changed, unknown_old, unknown_new


# ---------------------------------------------------------------------------------------------
# (c) The old host lines against the new recording


def agent_request_ids(records, backend):
    ids = []
    for r in records:
        if r["dir"] != "out":
            continue
        try:
            m = json.loads(r["line"])
        except ValueError:
            continue
        if not isinstance(m, dict):
            continue
        if backend == "claude" and m.get("type") == "control_request" and "request_id" in m:
            ids.append(m["request_id"])
        elif backend == "codex" and "method" in m and "id" in m:
            ids.append(m["id"])
    return ids


def host_lines_for(old_records, new_records, backend):
    """The old recording's host lines, with the agent's request ids carried over to the new
    recording's by order (the k-th request of the old CLI is the k-th of the new one)."""
    old_ids, new_ids = agent_request_ids(old_records, backend), agent_request_ids(new_records, backend)
    mapping = {json.dumps(a): b for a, b in zip(old_ids, new_ids)}
    lines = []
    for r in old_records:
        if r["dir"] != "in":
            continue
        try:
            m = json.loads(r["line"])
        except ValueError:
            lines.append(r["line"])
            continue
        if backend == "claude" and isinstance(m, dict) and m.get("type") == "control_response":
            resp = m.get("response") or {}
            key = json.dumps(resp.get("request_id"))
            if key in mapping:
                resp["request_id"] = mapping[key]
        elif backend == "codex" and isinstance(m, dict) and "method" not in m and "id" in m:
            key = json.dumps(m["id"])
            if key in mapping:
                m["id"] = mapping[key]
        lines.append(json.dumps(m, separators=(",", ":"), ensure_ascii=False))
    return lines


def replay(nucleic, new_path, lines):
    """Plays the new recording with `nucleic replay-agent`, the old host lines on its stdin."""
    # In a scratch folder: the replay agent makes the recording's file changes where it runs.
    folder = tempfile.mkdtemp(prefix="nucleic-drift-replay-")
    try:
        p = subprocess.run([nucleic, "replay-agent", new_path, "--speed", "max"], input="".join(l + "\n" for l in lines),
                           capture_output=True, text=True, timeout=60, cwd=folder)
    except subprocess.TimeoutExpired:
        return "replay-agent did not finish in 60 s"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if p.returncode == 0:
        return None
    if p.returncode in (3, 4):
        msg = [l for l in p.stderr.splitlines() if l.startswith("replay-agent:")]
        return (msg[-1] if msg else p.stderr.strip()[-300:]).replace(new_path, os.path.basename(new_path))
    raise CannotJudge("`nucleic replay-agent %s` failed (exit %d): %s" % (new_path, p.returncode, p.stderr.strip()[-500:]))


# ---------------------------------------------------------------------------------------------
# The comparison and its report


def codec_literals(backend):
    """The string literals of the backend's codec: the names it reads."""
    folder = os.path.join(REPO, "Sources", "NucleicAdapters")
    literals = set()
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if any(name.startswith(c) for c in PACKAGES[backend]["codec"]):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                literals.update(re.findall(r'"([A-Za-z_][A-Za-z0-9_/]*)"', f.read()))
    if not literals:
        raise CannotJudge("cannot read the %s codec's sources in %s" % (backend, folder))
    return literals


def leaf_key(field):
    """`request.tool_name (string)` → `tool_name`."""
    path = field.rsplit(" (", 1)[0]
    return re.sub(r"<[^>]*>|\[\]", "", path.split(".")[-1])


class Report:
    def __init__(self):
        self.broken, self.ignored, self.removed, self.info = [], [], [], []
        self.sections = []

    def verdict(self):
        return BROKEN if self.broken else IGNORED if self.ignored else COMPATIBLE

    def render(self, title):
        v = self.verdict()
        out = ["# %s" % title, "", "**Verdict: %s** (exit %d)" % (VERDICTS[v], v), ""]
        for heading, items, empty in (("Broken", self.broken, "nothing"),
                                      ("New information Nucleic ignores", self.ignored, "nothing"),
                                      ("Removed from the wire (broken only where the events changed or the codec reads the field)", self.removed, "nothing"),
                                      ("Changed values and notices (not judged)", self.info, "nothing")):
            out += ["## %s" % heading, ""]
            out += ["- " + i for i in items] if items else ["(%s)" % empty]
            out.append("")
        for heading, lines in self.sections:
            out += ["## %s" % heading, ""] + lines + [""]
        return "\n".join(out)


def compare(backend, old_dir, new_dir, nucleic, old_schema=None, new_schema=None):
    """Compares two folders of recordings; returns (Report, title)."""
    old, new = load_folder(old_dir), load_folder(new_dir)
    missing, extra = sorted(set(old) - set(new)), sorted(set(new) - set(old))
    if missing:
        raise CannotJudge("scenarios recorded for the pinned release but not for the new one: %s" % ", ".join(missing))
    report = Report()
    if extra:
        report.info.append("scenarios only in the new recordings (not compared): %s" % ", ".join(extra))
    for scenario in sorted(old):
        if old[scenario][0].get("backend") != backend or new[scenario][0].get("backend") != backend:
            raise CannotJudge("%s: the recordings are not all of backend %s" % (scenario, backend))
    literals = codec_literals(backend)
    old_versions, new_versions = cli_versions(old), cli_versions({k: new[k] for k in old})
    title = "Drift: %s %s → %s" % (PACKAGES[backend]["name"], "/".join(old_versions), "/".join(new_versions))

    # (a) the wire shape
    a, b = Shape(old, backend), Shape({k: new[k] for k in old}, backend)
    for kind in sorted(b.kinds() - a.kinds()):
        report.ignored.append("new message kind `%s` (in %s)" % (kind, ", ".join(sorted(b.scenarios[kind]))))
    for kind in sorted(a.kinds() - b.kinds()):
        report.removed.append("message kind `%s` is no longer sent (was in %s)" % (kind, ", ".join(sorted(a.scenarios[kind]))))
    for kind in sorted(a.kinds() & b.kinds()):
        seen = lambda shape, x: " (in %s)" % ", ".join(sorted(shape.where[(kind, x)])) if len(shape.where[(kind, x)]) < 4 else ""
        for sub in sorted(b.subkinds[kind] - a.subkinds[kind]):
            report.ignored.append("`%s`: new kind `%s`%s" % (kind, sub, seen(b, sub)))
        for sub in sorted(a.subkinds[kind] - b.subkinds[kind]):
            report.removed.append("`%s`: kind `%s` is no longer sent%s" % (kind, sub, seen(a, sub)))
        for f in sorted(b.fields[kind] - a.fields[kind]):
            report.ignored.append("`%s`: new field `%s`%s" % (kind, f, seen(b, f)))
        for f in sorted(a.fields[kind] - b.fields[kind]):
            key = leaf_key(f)
            entry = "`%s`: field `%s` is no longer sent%s" % (kind, f, seen(a, f))
            if key in literals and not any(leaf_key(g) == key and g.rsplit(" (", 1)[0] == f.rsplit(" (", 1)[0]
                                            for g in b.fields[kind]):
                report.broken.append(entry + " (the codec reads a field `%s`)" % key)
            else:
                report.removed.append(entry)
        for path in sorted(set(a.vocab[kind]) | set(b.vocab[kind])):
            va, vb = a.vocab[kind].get(path), b.vocab[kind].get(path)
            if va is None or vb is None:
                continue  # a new or removed field, listed above; its values are data
            added, gone = sorted(vb - va), sorted(va - vb)
            if added:
                report.ignored.append("`%s`: `%s` gains %s" % (kind, path, ", ".join("`%s`" % x for x in added)))
            if gone:
                report.removed.append("`%s`: `%s` loses %s" % (kind, path, ", ".join("`%s`" % x for x in gone)))
    table = ["| kind | pinned | new | scenarios |", "|---|---|---|---|"]
    for kind in sorted(a.kinds() | b.kinds()):
        fa = a.fingerprint(kind) if kind in a.fields else "—"
        fb = b.fingerprint(kind) if kind in b.fields else "—"
        table.append("| `%s` | %s | %s%s | %d |" % (kind, fa, fb, "" if fa == fb else " ≠", len(a.scenarios[kind] | b.scenarios[kind])))
    report.sections.append(("Wire shape (fingerprints of each kind's key paths)",
                            ["Whole wire: pinned `%s`, new `%s`." % (a.fingerprint(), b.fingerprint()), ""] + table))
    counts = []
    for scenario in sorted(old):
        ca, cb = a.counts[scenario], b.counts[scenario]
        diff = ["%s %d→%d" % (k, ca[k], cb[k]) for k in sorted(set(ca) | set(cb)) if ca[k] != cb[k]]
        if diff:
            counts.append("- %s: %s" % (scenario, ", ".join(diff)))
        if a.non_json[scenario] != b.non_json[scenario]:
            report.broken.append("%s: the lines on stdout that are not JSON differ: %r → %r" % (scenario, a.non_json[scenario], b.non_json[scenario]))
        ea, eb = a.stderr[scenario], b.stderr[scenario]
        for line in [l for l in eb if l not in ea]:
            report.info.append("%s: new stderr line: %s" % (scenario, line[:200]))
        for line in [l for l in ea if l not in eb]:
            report.info.append("%s: stderr line gone: %s" % (scenario, line[:200]))
    report.sections.append(("Messages per scenario that changed in number", counts or ["(none)"]))
    if backend == "claude":
        report.sections.append(("The `initialize` response", initialize_section(a, b)))

    if old_schema or new_schema:
        fa, fb = schema_facts(old_schema), schema_facts(new_schema)
        added, gone = sorted(fb - fa), sorted(fa - fb)
        for fact in added:
            report.ignored.append("schema: new %s" % fact)
        for fact in gone:
            name = re.split(r"[ .]", fact.rsplit(" ", 1)[-1].strip('"'))[-1]
            (report.broken if name in literals else report.removed).append(
                "schema: %s is gone%s" % (fact, " (the codec names `%s`)" % name if name in literals else ""))
        report.sections.append(("`codex app-server generate-json-schema`",
                                ["%d facts (properties, enum values, consts) pinned, %d new: %d added, %d removed." %
                                 (len(fa), len(fb), len(added), len(gone))]))

    # (b) events, through the real codec
    rows = ["| scenario | events pinned | events new | result |", "|---|---|---|---|"]
    for scenario in sorted(old):
        ev_old = events_of(nucleic, os.path.join(old_dir, scenario + ".jsonl"))
        ev_new = events_of(nucleic, os.path.join(new_dir, scenario + ".jsonl"))
        broken, changed, un_old, un_new = compare_events(ev_old, ev_new)
        report.broken += ["%s: %s" % (scenario, x) for x in broken]
        report.info += ["%s: %s" % (scenario, x) for x in changed]
        for kind in sorted(set(un_new)):
            entry = "`unknown` event `%s` (%s ×%d)" % (kind, scenario, un_new.count(kind))
            (report.ignored if kind not in un_old else report.info).append(entry if kind not in un_old else "still " + entry)
        for kind in sorted(set(un_old) - set(un_new)):
            report.info.append("%s: no more `unknown` event `%s`" % (scenario, kind))
        result = "broken (%d)" % len(broken) if broken else "same" if not changed and un_old == un_new else "changed (%d)" % (len(changed) + abs(len(un_new) - len(un_old)))
        rows.append("| %s | %d | %d | %s |" % (scenario, len(ev_old), len(ev_new), result))
    report.sections.append(("Events, scenario by scenario (`nucleic events`)", rows))

    # (c) the old host lines against the new recordings
    rows = ["| scenario | the pinned release's host lines, played to the new recording |", "|---|---|"]
    for scenario in sorted(old):
        lines = host_lines_for(old[scenario][1], new[scenario][1], backend)
        failure = replay(nucleic, os.path.join(new_dir, scenario + ".jsonl"), lines)
        if failure:
            report.broken.append("%s: the new CLI expects other host lines: %s" % (scenario, failure))
        rows.append("| %s | %s |" % (scenario, "accepted" if failure is None else failure))
    report.sections.append(("Replay: the old host lines against the new recordings (`nucleic replay-agent`)", rows))
    return report, title


def initialize_section(a, b):
    kind = next((k for k in sorted(a.kinds() | b.kinds()) if k.endswith("(to initialize)")), None)
    if kind is None or kind not in a.fields or kind not in b.fields:
        raise CannotJudge("no reply to `initialize` in the %s recordings" % ("pinned" if kind not in a.fields else "new"))
    out = []
    for path in ("response.response.commands[]", "response.response.models[]", "response.response.capabilities[]",
                 "response.response.agents[]", "response.response.available_output_styles[]"):
        old, new = a.vocab[kind].get(path, set()), b.vocab[kind].get(path, set())
        if not old and not new:
            raise CannotJudge("the reply to `initialize` has no `%s` in either recording" % path)
        line = "- `%s`: %d → %d" % (path.replace("response.response.", ""), len(old), len(new))
        if new - old:
            line += "; added " + ", ".join("`%s`" % x for x in sorted(new - old))
        if old - new:
            line += "; removed " + ", ".join("`%s`" % x for x in sorted(old - new))
        out.append(line)
    keys = lambda s: {f.split(" (")[0] for f in s.fields[kind] if f.count(".") == 2}
    ka, kb = keys(a), keys(b)
    out.append("- top-level keys: %d → %d%s%s" % (len(ka), len(kb),
               "; added " + ", ".join("`%s`" % k.split(".")[-1] for k in sorted(kb - ka)) if kb - ka else "",
               "; removed " + ", ".join("`%s`" % k.split(".")[-1] for k in sorted(ka - kb)) if ka - kb else ""))
    return out


# ---------------------------------------------------------------------------------------------
# Installing releases, recording them


def cache_root():
    return os.path.join(os.environ.get("NUCLEIC_CACHE") or os.path.expanduser("~/.cache/nucleic"), "drift")


def install(backend, version):
    """The release's binary, installed once into a cached virtualenv (`pip install --no-deps`:
    only the CLI inside the wheel is used)."""
    spec = PACKAGES[backend]
    venv = os.path.join(cache_root(), "%s-%s" % (spec["package"], version))
    if not os.path.exists(os.path.join(venv, ".complete")):
        sys.stderr.write("drift: installing %s==%s into %s\n" % (spec["package"], version, venv))
        shutil.rmtree(venv, ignore_errors=True)
        os.makedirs(cache_root(), exist_ok=True)
        for cmd in ([sys.executable, "-m", "venv", venv],
                    [os.path.join(venv, "bin", "pip"), "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                     "%s==%s" % (spec["package"], version)]):
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                raise CannotJudge("cannot install %s==%s: %s" % (spec["package"], version, (p.stderr or p.stdout).strip()[-800:]))
        open(os.path.join(venv, ".complete"), "w").close()
    site = subprocess.run([os.path.join(venv, "bin", "python3"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True).stdout.strip()
    binary = os.path.join(site, spec["binary"])
    if not os.path.exists(binary):
        raise CannotJudge("%s==%s has no %s" % (spec["package"], version, spec["binary"]))
    return binary


def pinned(backend):
    """The pinned version of the backend's package, from Tests/Peers/requirements.txt."""
    package = PACKAGES[backend]["package"]
    with open(os.path.join(HERE, "requirements.txt"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\s*%s==(\S+)" % re.escape(package), line)
            if m:
                return m.group(1)
    raise CannotJudge("%s is not pinned in Tests/Peers/requirements.txt" % package)


def newest(backend):
    """The newest release on PyPI (`pip index versions`)."""
    package = PACKAGES[backend]["package"]
    p = subprocess.run([sys.executable, "-m", "pip", "index", "versions", package, "--disable-pip-version-check"],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r"^%s \(([^)]+)\)" % re.escape(package), p.stdout, re.M)
    if p.returncode != 0 or not m:
        raise CannotJudge("cannot ask PyPI for the releases of %s: %s" % (package, (p.stderr or p.stdout).strip()[-300:]))
    return m.group(1)


def record(backend, binary, out):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    recorder = os.path.join(HERE, PACKAGES[backend]["recorder"])
    env = dict(os.environ)
    argv = [sys.executable, recorder, "--all", "--out", out]
    if backend == "claude":
        env["NUCLEIC_CLAUDE_BIN"] = binary
    else:
        argv += ["--codex", binary]
    sys.stderr.write("drift: recording every %s scenario with %s\n" % (backend, binary))
    for attempt in range(RECORD_ATTEMPTS):
        p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = []
        for line in p.stdout:  # shown as it comes: a whole recording takes minutes
            sys.stderr.write(line)
            lines.append(line.rstrip("\n"))
        if p.wait() == 0:
            return out
        failed = [l for l in lines if l.startswith("failed: ")]
        names = [n.strip() for n in failed[-1][len("failed: "):].split(",")] if failed else []
        if not names or any(n not in scenarios(backend) for n in names):
            break
        # A scenario with a race inside the CLI (docs/FIXTURES.md) may miss its canonical
        # interleaving on a busy machine: those alone are recorded again.
        sys.stderr.write("drift: recording %s again\n" % ", ".join(names))
        argv = [x for x in argv if x != "--all" and x not in scenarios(backend) and x != "--scenario"]
        argv = argv[:2] + [x for n in names for x in ("--scenario", n)] + argv[2:]
    failed = [l for l in lines if "FAILED" in l or "TIMEOUT" in l or l.startswith("failed")]
    raise CannotJudge("recording with the new release failed (exit %d): %s" % (p.returncode, "; ".join(failed) or "\n".join(lines[-10:])))


RECORD_ATTEMPTS = 3


def scenarios(backend):
    """The recorder's scenario names."""
    module = __import__(PACKAGES[backend]["recorder"][:-3])
    return set(module.BY_NAME) if backend == "claude" else set(module.SCENARIOS)


def judge(backend, version, against, out, nucleic):
    spec = PACKAGES[backend]
    if version == "latest":
        version = newest(backend)
    against = against or os.path.join(REPO, "Fixtures", backend)
    binary = install(backend, version)
    out = out or os.path.join(tempfile.gettempdir(), "nucleic-drift", "%s-%s" % (backend, version))
    record(backend, binary, os.path.join(out, "recordings"))
    old_schema = new_schema = None
    if backend == "codex":
        versions = cli_versions(load_folder(against))
        if len(versions) != 1:
            raise CannotJudge("the recordings in %s come from several releases: %s" % (against, ", ".join(versions)))
        old_schema = generate_schema(install(backend, versions[0]), os.path.join(out, "schema-pinned"))
        new_schema = generate_schema(binary, os.path.join(out, "schema-new"))
    report, title = compare(backend, against, os.path.join(out, "recordings"), nucleic, old_schema, new_schema)
    title += " (%s %s; pinned %s)" % (spec["package"], version, pinned(backend))
    report.sections.insert(0, ("What was compared", [
        "- pinned: the recordings in `%s`" % os.path.relpath(against, REPO) if against.startswith(REPO) else "- pinned: `%s`" % against,
        "- new: %s==%s, every scenario re-recorded against the mock model API (kept in `%s`)" % (spec["package"], version, out),
    ]))
    return report, title


def main(argv=None):
    ap = argparse.ArgumentParser(description="Judge a Claude Code or Codex release against the pinned one.")
    sub = ap.add_subparsers(dest="command", required=True)
    for backend in PACKAGES:
        p = sub.add_parser(backend, help="judge a release of %s" % PACKAGES[backend]["package"])
        p.add_argument("version", help="the PyPI version of %s, or latest" % PACKAGES[backend]["package"])
        p.add_argument("--against", help="the pinned release's recordings (default Fixtures/%s)" % backend)
        p.add_argument("--out", help="where the new recordings go (default $TMPDIR/nucleic-drift/<backend>-<version>)")
        p.add_argument("--report", help="also write the report to this file")
        p.add_argument("--nucleic", help="the nucleic binary (default $NUCLEIC_BIN, .build/debug/nucleic)")
    p = sub.add_parser("latest", help="judge the newest release of each backend, when it is not the pin")
    p.add_argument("--report-dir", help="write each report into this folder")
    p.add_argument("--nucleic")
    p = sub.add_parser("compare", help="compare two folders of recordings")
    p.add_argument("--backend", required=True, choices=sorted(PACKAGES))
    p.add_argument("--old", required=True)
    p.add_argument("--new", required=True)
    p.add_argument("--old-schema")
    p.add_argument("--new-schema")
    p.add_argument("--report")
    p.add_argument("--nucleic")
    args = ap.parse_args(argv)
    try:
        nucleic = find_nucleic(args.nucleic)
        if args.command == "latest":
            worst = COMPATIBLE
            for backend in PACKAGES:
                version, pin = newest(backend), pinned(backend)
                if version == pin:
                    print("%s: the newest release, %s, is the pin" % (PACKAGES[backend]["package"], version))
                    continue
                report, title = judge(backend, version, None, None, nucleic)
                text = report.render(title)
                print(text)
                if args.report_dir:
                    os.makedirs(args.report_dir, exist_ok=True)
                    with open(os.path.join(args.report_dir, "%s-%s.md" % (backend, version)), "w", encoding="utf-8") as f:
                        f.write(text + "\n")
                worst = max(worst, report.verdict())
            return worst
        if args.command == "compare":
            if bool(args.old_schema) != bool(args.new_schema):
                raise CannotJudge("give both --old-schema and --new-schema, or neither")
            report, title = compare(args.backend, args.old, args.new, nucleic, args.old_schema, args.new_schema)
        else:
            report, title = judge(args.command, args.version, args.against, args.out, nucleic)
        text = report.render(title)
        print(text)
        if args.report:
            with open(args.report, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        return report.verdict()
    except CannotJudge as e:
        print("drift: CANNOT JUDGE: %s" % e, file=sys.stderr)
        return CANNOT_JUDGE


if __name__ == "__main__":
    sys.exit(main())
