# fit gemm on a CSV whose last row has m = 2^63 - 1 (inside the CSV's
# range): the monotone walk converted m·2^(1/4) past int64 (undefined),
# then walked m one at a time toward 2^63. It must finish, with an axis
# that wide walked in coarser steps.
{
  echo "batch,m,n,k,transa,transb,dtype,time_us"
  for m in 1 2 4 8 16 32 64 128 256 512 1024 2048; do
    echo "1,$m,1,1,0,0,float,$((m + 5))"
  done
  echo "1,9223372036854775807,1,1,0,0,float,10"
} >"$T/fit.csv"
run 0 fit gemm "$T/fit.csv" -o "$T/m.yaml" --epochs 20 --layers 2 --neurons 8
grep -q "monotone fp32: .*coarser steps on an axis wider than 2^24" \
  "$T/out" "$T/err" || fail "no monotone line with coarser steps"
