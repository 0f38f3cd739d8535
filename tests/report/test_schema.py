#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""docs/report.schema.json means something: the documents ptshare writes
(a snapshot's, a run's, ptshare aslr's) are valid, and each of a set of
broken copies of them -- a field missing, one too many, a wrong type, a
negative count, an unknown reason or enum value -- is refused, as is a
broken schema (tests/support/schema_check.py, the checker every test uses).

  test_schema.py PTSHARE SOURCE_DIR
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

ptshare, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
checker = os.path.join(src, "tests/support/schema_check.py")
schema = os.path.join(src, "docs/report.schema.json")
failures = 0


def fail(what):
    global failures
    failures += 1
    print(f"FAIL: {what}", file=sys.stderr)


def check(doc, schema_path=schema):
    """The checker's exit status and messages on doc (a dict or bytes)."""
    text = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    r = subprocess.run(["/usr/bin/python3", checker, schema_path, "-"],
                       input=text, capture_output=True, timeout=120)
    return r.returncode, r.stderr.decode()


def written(tmp, name, *argv):
    """The JSON document `ptshare ARGV --json FILE` writes."""
    path = os.path.join(tmp, name)
    r = subprocess.run([ptshare, *argv[:1], "--json", path, *argv[1:]],
                       capture_output=True, timeout=600, cwd=tmp)
    if r.returncode:
        sys.exit(f"ptshare {' '.join(argv)}: exit {r.returncode}: "
                 f"{r.stderr.decode()}")
    with open(path, "rb") as f:
        return json.load(f)


def broken(doc, path, how, value=None):
    """A copy of doc with the member at path (keys and indexes) deleted
    (how "del"), set to value ("set") or given an extra member ("add")."""
    out = copy.deepcopy(doc)
    at = out
    for step in path[:-1] if how != "add" else path:
        at = at[step]
    if how == "del":
        del at[path[-1]]
    elif how == "set":
        at[path[-1]] = value
    else:
        at["unexpected"] = 1
    return out


with tempfile.TemporaryDirectory() as tmp:
    snap = written(tmp, "snap.json", "snapshot", "--pid", str(os.getpid()))
    run = written(tmp, "run.json", "run", "--no-record", "--", "/bin/true")
    aslr = written(tmp, "aslr.json", "aslr", "--", "/bin/true")

for name, doc in (("snapshot", snap), ("run", run), ("aslr", aslr)):
    status, says = check(doc)
    if status:
        fail(f"ptshare {name}'s document is refused: {says}")

if not snap["mappings"] or not snap["processes"][0]["regions"]:
    sys.exit("the snapshot of this process has no mapping or no region")
cases = [
    ("no schema", snap, ["schema"], "del", None),
    ("another schema", snap, ["schema"], "set", "ptshare.other"),
    ("another version", snap, ["version"], "set", 2),
    ("no totals.model_kb", snap, ["totals", "model_kb"], "del", None),
    ("an extra top-level member", snap, [], "add", None),
    ("a pid as a string", snap, ["processes", 0, "pid"], "set", "1"),
    ("a negative table count",
     snap, ["totals", "policies", "linux", "distinct", "pte"], "set", -1),
    ("an extra member in a region's policy",
     snap, ["processes", 0, "regions", 0, "policies", "linux"], "add", None),
    ("an unknown reason",
     snap, ["mappings", 0, "policies", "linux", "reason"], "set", "because"),
    ("an unknown why",
     snap, ["mappings", 0, "policies", "linux", "why"], "set", "because"),
    ("a prot of four letters", snap, ["mappings", 0, "prot"], "set", "rwxp"),
    ("a frame without line", snap, ["mappings", 0, "call_site"], "set",
     [{"object": None, "offset": 0, "function": None, "file": None}]),
    ("a stream without records", run, ["stream", "records"], "del", None),
    ("a stream that is a number", run, ["stream"], "set", 0),
    ("an extra member in run", run, ["run"], "add", None),
    ("an exit status as a string", run, ["run", "exit_status"], "set", "0"),
    ("an unknown checkpoint",
     run, ["final_checkpoints", 0, "checkpoint"], "set", "later"),
    ("a report without stream in ptshare aslr's",
     aslr, ["runs", "randomised", "report", "stream"], "del", None),
    ("an aslr run without exit_status",
     aslr, ["runs", "not_randomised", "exit_status"], "del", None),
    ("a report's member in ptshare aslr's", aslr, ["help"], "set", []),
    ("a build id not in hex", run, ["build_ids_changed"], "set",
     [{"object": "/bin/true", "trace": "xyz", "here": None}]),
    ("no build_ids_changed", snap, ["build_ids_changed"], "del", None),
]
for what, doc, path, how, value in cases:
    status, says = check(broken(doc, path, how, value))
    if status != 1 or not says:
        fail(f"{what}: the checker said {status} ({says.strip()})")
status, says = check(b"{\"schema\": \"ptshare.report\",}")
if status != 1:
    fail(f"text that is no JSON: the checker said {status}")

# A schema the checker cannot use fails the check (2), never passes it.
with tempfile.NamedTemporaryFile("w", suffix=".json") as bad:
    bad.write('{"type": 12}')
    bad.flush()
    status, says = check(snap, bad.name)
    if status != 2:
        fail(f"a broken schema: the checker said {status} ({says.strip()})")

print(f"test_schema: 3 documents valid, {len(cases) + 1} broken ones refused"
      if not failures else f"test_schema: {failures} failures")
sys.exit(1 if failures else 0)
