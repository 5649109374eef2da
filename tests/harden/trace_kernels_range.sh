# trace kernels wrote GEMM rows its consumers refuse (m*n past 64 bits)
# and times printed as 0.000: such ops are skipped, saying why, and
# every row written prices with `kernel gemm --csv` (m = 2^63 - 1 with
# n = k = 1 is inside the range: written, and fit takes it).
run 0 trace kernels kineto_gemm_sizes.json --csv
out_has "aten::mm,1,64,16,32,0,0,fp32,20.000,1,strides"
out_has "aten::mm,1,9223372036854775807,1,1,0,0,fp32,30.000,1,strides"
err_has "skipped 1 GEMM ops: sizes \`kernel --csv\` and \`fit\` refuse"
err_has "skipped 1 GEMM ops: kernel time rounds to 0.000 us"
cp "$T/out" "$T/rows.csv"
run 0 kernel gemm --csv "$T/rows.csv" --gpu A100
[ "$(grep -c ',[0-9.]*$' "$T/out")" -eq 2 ] || fail "rows do not price"
