# A collective's pg_size 2^62, -5 or 2^31 + 5 was priced as one rank, and
# in_msg_nelems -100 fell back to the tensor's bytes: refused now.
coll() { # in_msg_nelems pg_size > file
  printf '{"schema": "1.0.2-chakra.0.0.4", "nodes": [\n'
  printf '{"id": 13, "name": "c10d::allreduce_", "ctrl_deps": 0, "inputs": {"values": [[[31, 31, 0, 1000, 4, "cuda:0"]]], "shapes": [[[1000]]], "types": ["GenericList[Tensor(float)]"]}, "outputs": {"values": [[[31, 31, 0, 1000, 4, "cuda:0"]]], "shapes": [[[1000]]], "types": ["GenericList[Tensor(float)]"]}},\n'
  printf '{"id": 14, "name": "record_param_comms", "ctrl_deps": 13, "inputs": {"values": [[[31, 31, 0, 1000, 4, "cuda:0"]]], "shapes": [[[1000]]], "types": ["GenericList[Tensor(float)]"]}, "attrs": [{"name": "collective_name", "type": "string", "value": "allreduce"}, {"name": "in_msg_nelems", "type": "uint64", "value": %s}, {"name": "pg_size", "type": "uint64", "value": %s}]}\n' "$1" "$2"
  printf ']}\n'
}
for pg in 4611686018427387904 -5 2147483653 0; do
  coll 1000 $pg >"$T/c.json"
  run 1 replay "$T/c.json" --gpu A100
  err_has "error: node #2: pg_size $pg is not a whole number from 1 to 1000000"
done
coll -100 4 >"$T/c.json"
run 1 replay "$T/c.json" --gpu A100
err_has "error: node #2: in_msg_nelems -100 is not a whole number from 0"
coll 1000 4 >"$T/c.json"
run 0 replay "$T/c.json" --gpu A100
out_has "1 kernels priced"
