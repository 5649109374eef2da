# JSON leaves a repeated key's meaning open; the readers took the first
# or the last in silence. Each refuses it now: ET nodes, Kineto events
# and their args, and report's JSON lines.
printf '{"schema": "1.0.2-chakra.0.0.4", "nodes": [\n{"id": 3, "name": "aten::relu", "ctrl_deps": 0, "id": 4}\n]}\n' \
  >"$T/et.json"
run 1 replay "$T/et.json" --gpu A100
err_has "et.json:2:55: error: node #1: key 'id' appears twice in an object"
printf '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "ts": 2, "dur": 1}]}' \
  >"$T/k.json"
run 1 trace stats "$T/k.json"
err_has "k.json:1:89: error: event #1 has two 'ts' keys"
printf '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"External id": 1, "External id": 2}}]}' \
  >"$T/a.json"
run 1 trace stats "$T/a.json"
err_has "'args' of event #1 has two 'External id' keys"
printf '{"system.gpu":"A100","e2e_ms":1,"e2e_ms":2}\n' >"$T/r.jsonl"
run 1 report "$T/r.jsonl" -o "$T/r.html"
err_has "key 'e2e_ms' appears twice in a row"
