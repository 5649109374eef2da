# device_lib.sh — sourced by run_device.sh and run_round2.sh, the scripts
# of a lent GPU machine's one prepared call: finds the CUDA 13 libraries
# a dlrmc-bench built elsewhere needs, and runs each stage under its own
# time limit so a slow or failing stage leaves the others' results.

# libcublas/libcupti/libcudart of CUDA 13, wherever this image keeps them
libdirs=""
for lib in libcublas.so.13 libcupti.so.13 libcudart.so.13 libcublasLt.so.13; do
  p=$(timeout 20 find /usr/local /opt /usr/lib -name "$lib" 2>/dev/null | head -1)
  [ -n "$p" ] && libdirs="$libdirs:$(dirname "$p")"
done
export LD_LIBRARY_PATH="${libdirs#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"

stage() { # stage SECONDS NAME CMD...
  local t=$1 name=$2; shift 2
  local s=$SECONDS
  echo "=== $name (limit ${t}s)"
  timeout -k 5 "$t" "$@"; local rc=$?
  echo "=== $name: rc=$rc, $((SECONDS - s)) s"
}

# gemm_sweeps BENCH DIR DTYPE FWD_S WGRAD_S BMM_S: dlrmc-bench's GEMM shape
# sets for one dtype, one stage (and CSV) each, so a stage cut off by its
# limit loses only its own slice: the paper's shapes (25 s), forward
# m = batch, weight gradients k = batch, interaction bmm (limits given).
gemm_sweeps() {
  local b=$1 o=$2 d=$3
  stage 25 gemm_paper_$d "$b" gemm -o "$o/gemm_paper_$d.csv" --samples 100 --dtype $d
  stage "$4" gemm_fwd_$d "$b" gemm -o "$o/gemm_fwd_$d.csv" --samples 0 --batch 1 \
    --m 512,2048,8192,32768,65536 --n 1,16,64,128,256,512,1024 --k 13,64,128,256,512,1024,3456 \
    --transa N --transb T --dtype $d
  stage "$5" gemm_wgrad_$d "$b" gemm -o "$o/gemm_wgrad_$d.csv" --samples 0 --batch 1 \
    --k 2048,8192,65536 --m 64,256,512,1024 --n 13,128,512,1024,3456 --transa T --transb N --dtype $d
  stage "$6" gemm_bmm_$d "$b" gemm -o "$o/gemm_bmm_$d.csv" --samples 0 \
    --batch 2048,8192,32768,65536 --m 9,27 --n 9,27 --k 16,64,128 --transa N --transb T --dtype $d
}
