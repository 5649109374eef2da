#!/bin/sh
# smoke_test.sh BENCH OUTDIR — runs a tiny sweep of every dlrmc-bench kind
# on the first GPU and checks that each CSV has its header row and one
# timed row per configuration. Exits 77 (ctest: skipped) when no GPU is
# visible, which `dlrmc-bench devices` reports with that status.
set -u
bench=$1
out=$2
mkdir -p "$out" || exit 1
"$bench" devices
rc=$?
if [ "$rc" -eq 77 ]; then
  echo "smoke_test: no GPU visible: skipped"
  exit 77
fi
[ "$rc" -eq 0 ] || exit "$rc"

fails=0
# run KIND EXPECTED_ROWS HEADER ARGS...
run() {
  kind=$1 rows=$2 header=$3
  shift 3
  csv="$out/$kind.csv"
  rm -f "$csv"
  if ! "$bench" "$kind" --warmup 1 --iters 3 -o "$csv" "$@"; then
    echo "smoke_test: $kind failed"; fails=$((fails + 1)); return
  fi
  if ! grep -qx "$header" "$csv"; then
    echo "smoke_test: $kind: header row '$header' missing"
    fails=$((fails + 1)); return
  fi
  got=$(grep -v '^#' "$csv" | tail -n +2 | grep -c ',[0-9][0-9.]*,[0-9][0-9.]*$')
  if [ "$got" -ne "$rows" ]; then
    echo "smoke_test: $kind: $got timed rows, expected $rows"
    cat "$csv"; fails=$((fails + 1)); return
  fi
  echo "smoke_test: $kind ok ($rows rows)"
}

run gemm 4 'batch,m,n,k,transa,transb,dtype,time_us,mean_us' \
  --batch 1,8 --m 64 --n 32 --k 40 --transa N --transb N,T --dtype fp32
run gemm 3 'batch,m,n,k,transa,transb,dtype,time_us,mean_us' \
  --batch 1 --m 64 --n 64 --k 64 --transa T --transb N --dtype tf32,fp16,bf16
run embedding 2 'direction,batch,rows,tables,pooling,dim,time_us,mean_us' \
  --batch 64 --rows 1000 --tables 2 --pooling 4 --dim 32
run concat 1 'batch,inputs,dim,bytes,time_us,mean_us' \
  --batch 64 --inputs 3 --dim 16
run memcpy 5 'direction,pinned,bytes,time_us,mean_us' --bytes 64Ki
run transpose 2 'batch,m,n,dtype,time_us,mean_us' \
  --batch 4 --m 9 --n 40 --dtype fp32,fp16
run tril 4 'kind,batch,m,n,diag,dtype,time_us,mean_us' \
  --batch 16 --n 9 --diag 0,1
[ "$fails" -eq 0 ]
