#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks JSON documents against docs/report.schema.json (draft 2020-12).

schema_check.py SCHEMA [FILE...]: each FILE, or standard input when none
is named ("-" names it too).  Prints each violation with the path of the
value it is in; exits 0 when every document is valid, 1 when one is not
(or is no JSON), 2 when the schema or jsonschema itself is missing or
broken -- a check that cannot run fails, it is never skipped.
"""
import json
import sys

try:
    import jsonschema
except ImportError as e:
    sys.exit(f"schema_check: {e} (install python3-jsonschema)")


def where(error):
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}"
                   for p in error.absolute_path)
    return path or "(the document)"


def check(validator, name, text):
    try:
        doc = json.loads(text)
    except ValueError as e:
        print(f"{name}: not JSON: {e}", file=sys.stderr)
        return False
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors[:20]:
        print(f"{name}: {where(e)}: {e.message}", file=sys.stderr)
    return not errors


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: schema_check.py SCHEMA [FILE...]")
    try:
        with open(sys.argv[1], encoding="utf-8") as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
    except (OSError, ValueError, jsonschema.SchemaError) as e:
        print(f"schema_check: {sys.argv[1]}: {e}", file=sys.stderr)
        sys.exit(2)
    validator = jsonschema.Draft202012Validator(schema)
    ok = True
    for name in sys.argv[2:] or ["-"]:
        if name == "-":
            text = sys.stdin.buffer.read()
        else:
            with open(name, "rb") as f:
                text = f.read()
        ok = check(validator, name, text) and ok
    sys.exit(0 if ok else 1)


main()
