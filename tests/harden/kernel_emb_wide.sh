# An embedding 2^29 wide (dim is documented up to 2^31 - 1): the enhanced
# model's row bytes overflowed an int. The price must be finite, and
# grow with the width.
run 0 kernel embedding_fwd batch=1 rows=1 tables=1 pooling=1 dim=536870912 \
  --gpu V100
wide=$(cat "$T/out")
run 0 kernel embedding_fwd batch=1 rows=1 tables=1 pooling=1 dim=1024 \
  --gpu V100
narrow=$(cat "$T/out")
awk -v w="$wide" -v n="$narrow" 'BEGIN { exit !(w + 0 > n + 0 && w + 0 < 1e12) }' \
  || fail "price $wide (dim 2^29) vs $narrow (dim 1024)"
# the same table from an execution trace: weight [4, 536870912]
run 0 replay et_embedding_wide.json --gpu V100 --csv
grep -qi "nan\|inf" "$T/out" && fail "non-finite replay: $(cat "$T/out")"
out_has "e2e"
