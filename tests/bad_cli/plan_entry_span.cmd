run
plan_entry_span.yaml
