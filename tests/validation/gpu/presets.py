"""Read dlrmc's model presets (spec/models/*.yaml) the way the study
language does, for the scripts of this folder: dlrm_step.py builds the
network in PyTorch from them, compare.py writes the dlrmc study of the
same network. PyYAML only (Debian's python3-yaml)."""

import os

import yaml

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "..", "..", "..", "spec", "models")


def count(v):
    """A dlrmc count: an int, or a string with a k/M/G (10^3) or Ki/Mi/Gi
    (2^10) suffix, as the study language writes them."""
    if isinstance(v, (int, float)):
        return int(v)
    v = str(v).strip()
    for suf, mul in (("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30),
                     ("k", 10**3), ("K", 10**3), ("M", 10**6), ("G", 10**9)):
        if v.endswith(suf):
            return int(float(v[:-len(suf)]) * mul)
    return int(v)


def load_preset(name):
    """(model mapping, [(rows, dim, pooling) per table]) of preset NAME."""
    with open(os.path.join(MODELS, name + ".yaml")) as f:
        m = yaml.safe_load(f)
    dim = m["embedding"]["dim"]
    pool_default = m["embedding"].get("pooling", 1)
    tables = []
    for g in m["embedding"]["tables"]:
        for _ in range(count(g.get("count", 1))):
            tables.append((count(g["rows"]), count(g.get("dim", dim)),
                           float(g.get("pooling", pool_default))))
    return m, tables


def capped(tables, cap):
    """The tables with at most CAP rows each (0: as they are)."""
    return [(min(r, cap) if cap else r, d, p) for r, d, p in tables]
