run
stacked_scale.yaml
