kernel
all_to_all
bytes=1M
ranks=8
algo=ring
--gpu
H100
