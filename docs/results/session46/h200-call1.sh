#!/bin/bash
# session 46, call 1: fuzz_op_file with the size-changing mutation (fuzz_resize.h) and
# per-op features, ref against cuda, then against avx512. Binaries built on the dev VM
# (clang 14 with libFuzzer, nvcc 13, sm_90): the H200 host's clang has no libFuzzer runtime.
set -u
W=$OUT/w; mkdir -p $W
DC=$PWD/.devcarry/c46
export LD_LIBRARY_PATH=$DC/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib
# the CUDA runtime maps memory where ASan protects its shadow gap by default
export ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0
T0=$(date +%s)
t() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv; lscpu | grep "Model name"; nproc; } > $W/machine.txt 2>&1
cat $W/machine.txt
for be in cuda avx512; do
  secs=250; [ $be = avx512 ] && secs=200
  mkdir -p /tmp/co_$be
  HMX_FUZZ_BACKEND=$be $DC/bin/fuzz_op_file -max_total_time=$secs -max_len=8192 -timeout=20 \
     -seed=46 -print_final_stats=1 -artifact_prefix=$W/crash-op-$be- \
     /tmp/co_$be $DC/corp_op vectors > $W/libfuzzer_op_$be.txt 2>&1
  t "libfuzzer op $be rc=$?"; grep -v "^#\|^\"" $W/libfuzzer_op_$be.txt | tail -12
  ls /tmp/co_$be | wc -l
done
cd $W && tar czf $OUT/logs.tgz . && ls $W
