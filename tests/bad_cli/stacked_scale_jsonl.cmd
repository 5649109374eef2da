run
stacked_scale.yaml
--format
jsonl
