# A 13-line study, 65,536 tables on 65,536 A100s, needed tens of GB (OOM
# at 24 GB) and `check` accepted it; 4 tables on 65,536 GPUs took 2.1 GB.
# Each point's memory is estimated before anything is built, and a point
# over the budget (default 1 GiB; --memory-budget) is E0208.
study() { # tables gpus
  cat <<YAML
study: huge
model:
  bottom_mlp: [13, 64]
  top_mlp: [64, 1]
  embedding:
    dim: 64
    tables:
      - {count: $1, rows: 1000, pooling: 1}
training:
  batch_size: 65536
system:
  gpu: A100
  gpus: $2
  gpus_per_host: 8
YAML
}
study 65536 65536 >"$T/huge.yaml"
run 1 check "$T/huge.yaml"
err_has "huge.yaml:13:9: error: 65536 GPUs and 65536 tables need an estimated 50.5 GiB, over the memory budget of 1.0 GiB [E0208]"
err_has "--memory-budget SIZE"
run 1 run "$T/huge.yaml"
err_has "[E0208]"
study 4 65536 >"$T/wide.yaml"
run 1 run "$T/wide.yaml"
err_has "65536 GPUs and 4 tables need an estimated 2.5 GiB"
# within the budget it runs; a lower budget refuses the same point
study 4 8192 >"$T/ok.yaml"
run 0 run "$T/ok.yaml"
run 1 run "$T/ok.yaml" --memory-budget 100MiB
err_has "over the memory budget of 0.1 GiB"
run 2 check "$T/ok.yaml" --memory-budget 12
err_has "--memory-budget wants a size of at least 1MiB"
