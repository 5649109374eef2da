# Op names from traces: a newline or control character was printed raw
# (a fake row in a listing), \u0000 cut an ET name short in silence, and
# a 100,000-character name made the DOT unrenderable (Graphviz refuses a
# label past 16,384 bytes).
et() { # name-json > file
  printf '{"schema": "1.0.2-chakra.0.0.4", "nodes": [\n'
  printf '{"id": 3, "name": "%s", "ctrl_deps": 0, "inputs": {"values": [[10, 10, 0, 64, 4, "cuda:0"]], "shapes": [[8, 8]], "types": ["Tensor(float)"]}}\n' "$1"
  printf ']}\n'
}
et 'my::op\nFAKE ROW\u0007' >"$T/ctl.json"
run 0 graph --from-et "$T/ctl.json"
out_has '0 my::op\nFAKE ROW\x07 [input'
grep -q '^FAKE ROW' "$T/out" "$T/err" && fail "a raw newline was printed"
err_has '     1  my::op\nFAKE ROW\x07'
et 'aten::relu\u0000hidden' >"$T/nul.json"
run 1 graph --from-et "$T/nul.json"
err_has "nul.json:2:"
err_has "a string contains a NUL character (\\u0000)"
printf '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a\\u0000b", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]}' \
  >"$T/nul_kineto.json"
run 1 trace stats "$T/nul_kineto.json"
err_has "'name' of event #1 contains a NUL character"
et "op$(head -c 100000 /dev/zero | tr '\0' x)" >"$T/long.json"
run 0 graph --from-et "$T/long.json" --format dot
awk 'length($0) > 16000 { exit 1 }' "$T/out" || fail "a DOT line past 16,000 bytes"
out_has '... (100002 bytes)'
if command -v dot >/dev/null 2>&1; then
  dot -Tsvg "$T/out" >"$T/g.svg" 2>"$T/dot.err" || fail "dot refused the graph"
fi
