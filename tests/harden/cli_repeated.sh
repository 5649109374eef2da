# `--gpu A100 --gpu H100` priced on H100 in silence: an option that takes
# one value, given twice, is a usage error (exit 2).
run 2 kernel gemm m=64 n=64 k=64 --gpu A100 --gpu H100
err_has "dlrmc kernel: --gpu given twice ('A100', then 'H100')"
run 2 replay et_cycle_ops.json --gpu A100 --gpu H100
err_has "dlrmc replay: --gpu given twice ('A100', then 'H100')"
run 2 replay et_cycle_ops.json --gpu A100 -o "$T/a" -o "$T/b"
err_has "-o given twice"
