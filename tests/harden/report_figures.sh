# report: e2e_ms 1e308 and -1e308 wrote 24 "-nan ms" tick labels and
# exited 0 (CSV and JSON lines); a Latin-1 table wrote invalid UTF-8.
printf 'system.gpu,training.batch_size,e2e_ms\nA100,512,1e308\nH100,512,-1e308\n' \
  >"$T/span.csv"
run 1 report "$T/span.csv" -o "$T/span.html"
err_has "span.csv:2:10: error:"
err_has "'1e308' in column 'e2e_ms' is not a number from 0 to 1e30"
err_has "span.csv:3:10: error:"
[ -e "$T/span.html" ] && fail "a page was written"
printf '{"system.gpu":"A100","e2e_ms":1e308}\n{"system.gpu":"H100","e2e_ms":-1e308}\n' \
  >"$T/span.jsonl"
run 1 report "$T/span.jsonl" -o "$T/span.html"
err_has "span.jsonl:2:1: error:"
# the largest figures still draw, with finite ticks
printf 'system.gpu,e2e_ms\nA100,1e30\nH100,0\n' >"$T/big.csv"
run 0 report "$T/big.csv" -o "$T/big.html"
grep -q 'nan\|inf' "$T/big.html" && fail "non-finite text in the page"
# Latin-1 bytes and a control character become U+FFFD
printf 'system.gpu,e2e_ms\ncaf\351,3\nH100\001,4\n' >"$T/latin1.csv"
run 0 report "$T/latin1.csv" -o "$T/latin1.html"
utf8 "$T/latin1.html"
grep -q "caf$(printf '\357\277\275')" "$T/latin1.html" || fail "no U+FFFD"
