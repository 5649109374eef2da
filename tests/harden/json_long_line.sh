# A diagnostic in a long single-line JSON echoed an empty line with the
# caret at column 1: it shows a window of the line, caret under the byte.
awk 'BEGIN {
  printf "{\"traceEvents\": ["
  for (i = 0; i < 2000; i++)
    printf "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::relu\", \"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 1},", 10 + i * 10
  printf "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::relu\", \"pid\": 1, \"tid\": 1, \"ts\": -7, \"dur\": 1}]}"
}' >"$T/long.json"
run 1 trace stats "$T/long.json"
grep -q '^ *1 | \.\.\..*"ts": -7, "dur": 1}\]}$' "$T/err" || fail "no window"
# the caret sits under the '-' of -7 (same column in the echo)
awk '/^ *1 \| / { l = $0 } /^ *\| *\^/ { c = $0 }
  END { p = index(c, "^"); exit !(substr(l, p, 2) == "-7") }' "$T/err" \
  || fail "caret not under the value"
