#!/bin/sh
# check_detail.sh — `dlrmc run` prices a PRICED graph (graphgen.h: one
# received tensor per class of feature) unless it writes timelines, when
# it builds the FULL graph (one per table, every view). The two must give
# the same table to the last digit: for every study in studies/ and the
# wide detail.yaml (every sharding class, both embedding kernels,
# quantized all-to-alls, two hosts, the fused style), per point, per rank
# and per shard, `run --digits 17` with and without --timeline.
#   check_detail.sh DLRMC DETAIL_YAML OUTDIR
set -eu
dlrmc=$1 detail=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
n=0
same() { # NAME STUDY ARGS...: the table without and with timelines
  name=$1 study=$2
  shift 2
  "$dlrmc" run "$study" --digits 17 "$@" -o "$out/$name.priced.csv"
  rm -rf "$out/tl"
  "$dlrmc" run "$study" --digits 17 "$@" --timeline "$out/tl" \
    -o "$out/$name.full.csv"
  [ -n "$(ls "$out/tl")" ] || { echo "$name: no timeline written" >&2; exit 1; }
  if ! cmp "$out/$name.priced.csv" "$out/$name.full.csv"; then
    echo "check_detail.sh: $name $*: PRICED and FULL graphs disagree" >&2
    diff "$out/$name.priced.csv" "$out/$name.full.csv" | head -20 >&2
    exit 1
  fi
  n=$((n + 1))
}
for s in studies/*.yaml; do
  b=$(basename "$s" .yaml)
  case $b in
    capacity-*) ;; # capacity rows write no timeline: always PRICED
    production-scale) same "$b" "$s" ;; # 4 s with timelines: once
    *) same "$b" "$s"; same "$b.rank" "$s" --per-rank
       same "$b.shard" "$s" --per-shard ;;
  esac
done
for mode in "" --per-rank --per-shard; do
  same "detail$mode" "$detail" $mode
  same "detail-fused$mode" "$detail" $mode -D system.framework=fused
  same "detail-torchrec$mode" "$detail" $mode -D system.framework=torchrec
  same "detail-per-table$mode" "$detail" $mode \
    -D model.embedding_kernel=per_table -D training.precision=fp32 \
    -D training.optimizer=sgd -D training.sparse_optimizer=sgd
done
echo "check_detail.sh: $n runs, PRICED and FULL graphs give the same tables"
