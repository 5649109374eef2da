# ET nodes whose parents loop were never reached from a root: replay
# said "0 ops" and exited 0. Two aten::mm pointing at each other, and a
# process node under its own thread, must be E0801 naming the loop.
run 1 replay et_cycle_ops.json --gpu A100
err_has "2 nodes are not below a root: parent ids loop: 3 (line 2) -> 4 (line 3) -> 3"
run 1 replay et_cycle_process.json --gpu A100
err_has "3 nodes are not below a root: parent ids loop: 1 (line 2) -> 2 (line 3) -> 1"
