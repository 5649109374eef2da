# Trace input: garbage after a gzip stream was accepted (plain JSON with
# trailing garbage is refused); a cut gzip said "0 bytes decompressed";
# a byte-order mark gave "invalid char" at 1:2.
cp kineto_gemm_sizes.json "$T/k.json"
gzip -n -c "$T/k.json" >"$T/k.json.gz"
run 0 trace kernels "$T/k.json.gz" --csv
cp "$T/k.json.gz" "$T/tail.json.gz"
printf 'garbage' >>"$T/tail.json.gz"
size=$(wc -c <"$T/k.json.gz")
run 1 trace kernels "$T/tail.json.gz" --csv
err_has "trailing data after the gzip stream, at byte $size of the compressed file"
# two members back to back are one stream of text (here: two documents,
# so JSON's own trailing-garbage error)
cat "$T/k.json.gz" "$T/k.json.gz" >"$T/two.json.gz"
run 1 trace kernels "$T/two.json.gz" --csv
err_has "invalid JSON: trailing garbage"
head -c $((size / 2)) "$T/k.json.gz" >"$T/half.json.gz"
run 1 trace kernels "$T/half.json.gz" --csv
err_has "corrupt or truncated gzip data: unexpected end of file"
err_lacks "= help: 0 bytes decompressed"
grep -q "help: [1-9][0-9]* bytes decompressed from [1-9][0-9]* compressed" \
  "$T/err" || fail "no count of the bytes decompressed"
printf '\357\273\277' >"$T/bom.json"
cat "$T/k.json" >>"$T/bom.json"
run 0 trace kernels "$T/bom.json" --csv
out_has "aten::mm,1,64,16,32"
printf '\357\273\277{"traceEvents": [1]}' >"$T/bom2.json"
run 1 trace kernels "$T/bom2.json"
err_has "bom2.json:1:18: error: element #1 of 'traceEvents' is a number"
