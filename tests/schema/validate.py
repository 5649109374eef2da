#!/usr/bin/env python3
"""Validates example studies against spec/study.schema.json (JSON Schema
2020-12): every studies/*.yaml, the valid studies of tests/fuzz/corpus/,
and every ```yaml block of spec/study.md that is a whole study (has a
`model:` key). Exits 77 (ctest skip) when python3-jsonschema or
python3-yaml is missing; exits 1 on any invalid example."""
import glob
import os
import re
import sys

try:
    import jsonschema
    import yaml
except ImportError as e:
    print(f"skipped: {e} (install python3-jsonschema python3-yaml)")
    sys.exit(77)

root = os.environ.get("DC_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
with open(os.path.join(root, "spec", "study.schema.json")) as f:
    import json
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)

docs = []
for p in sorted(glob.glob(os.path.join(root, "studies", "*.yaml"))):
    docs.append((os.path.relpath(p, root), open(p).read()))
for p in sorted(glob.glob(os.path.join(root, "tests", "fuzz", "corpus", "*.yaml"))):
    docs.append((os.path.relpath(p, root), open(p).read()))
md = open(os.path.join(root, "spec", "study.md")).read()
for i, block in enumerate(re.findall(r"```yaml\n(.*?)```", md, re.S)):
    docs.append((f"spec/study.md block {i + 1}", block))

bad = 0
checked = 0
for name, text in docs:
    doc = yaml.safe_load(text)
    if not isinstance(doc, dict) or "model" not in doc:
        continue  # a fragment of a study, not a whole one
    checked += 1
    for err in v.iter_errors(doc):
        print(f"{name}: {'/'.join(map(str, err.path))}: {err.message}")
        bad += 1
print(f"validated {checked} example studies, {bad} errors")
sys.exit(1 if bad else 0)
