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
