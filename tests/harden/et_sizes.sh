# ET sizes: numel 2^62 of 8-byte elements priced to 6.6e9 ms with bytes
# saturated (E0703 now); a numel of 2^64 dropped the op silently; shapes
# [-5] and [1.5, 2] were accepted. Each is refused where it stands.
et() { # numel shape esize > file
  printf '{"schema": "1.0.2-chakra.0.0.4", "nodes": [\n'
  printf '{"id": 3, "name": "aten::relu", "ctrl_deps": 0, "inputs": {"values": [[10, 10, 0, %s, %s, "cuda:0"]], "shapes": [%s], "types": ["Tensor(double)"]}, "outputs": {"values": [[12, 12, 0, %s, %s, "cuda:0"]], "shapes": [%s], "types": ["Tensor(double)"]}}\n' \
    "$1" "$3" "$2" "$1" "$3" "$2"
  printf ']}\n'
}
et 4611686018427387904 "[4611686018427387904]" 8 >"$T/a.json"
run 1 replay "$T/a.json" --gpu A100
err_has "a.json:2:1: error: op 'aten::relu' (node 3): its tensors' bytes"
err_has "[E0703]"
et 18446744073709551616 "[4]" 8 >"$T/b.json"
run 1 replay "$T/b.json" --gpu A100
err_has "b.json:2:83: error: node #1: tensor numel 18446744073709551616 is not a whole number from 0 to 2^63 - 1"
et 4 "[-5]" 8 >"$T/c.json"
run 1 replay "$T/c.json" --gpu A100
err_has "c.json:2:113: error: node #1: shape dimension -5 is not a whole number"
et 4 "[1.5, 2]" 8 >"$T/d.json"
run 1 replay "$T/d.json" --gpu A100
err_has "d.json:2:113: error: node #1: shape dimension 1.5 is not a whole number"
et 64 "[8, 8]" 8 >"$T/e.json"
run 0 replay "$T/e.json" --gpu A100
out_has "1 kernels priced, 0 ops unpriced"
