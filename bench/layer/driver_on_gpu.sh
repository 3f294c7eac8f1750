#!/bin/bash
# The driver backend on the H100 (docs/driver.md): vk_workload without the layer
# (NVIDIA's own statistics), under tally's driver and simgpu backends, the
# VK_KHR_performance_query probe, each coarser granularity against the program's own
# per-submission queries, calibrated timestamps (test_layer_calibrated against this
# driver), and the recording-cost benchmark.
# Usage: OUT=DIR bash bench/layer/driver_on_gpu.sh ICD_JSON, with a build at
# /opt/tally-driver (see docs/driver.md for the H100 recipe); CPU (default 3) pins
# the runs, ROUNDS (default 7) sets the benchmark rounds. Then
#   python3 bench/layer/compare_driver_report.py DIR/truth1.jsonl DIR/driver1.jsonl DIR/driver1.json
ICD=$1
B=${B:-/opt/tally-driver}
export VK_DRIVER_FILES=$ICD
LAYER="VK_ADD_LAYER_PATH=$B/share/vulkan/explicit_layer.d VK_INSTANCE_LAYERS=VK_LAYER_TALLY_counters"
(nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv) > $OUT/gpu.txt 2>&1
vulkaninfo --summary > $OUT/vulkaninfo.txt 2>&1
for i in 1 2 3; do
  timeout 60 taskset -c ${CPU:-3} $B/bin/vk_workload $B/tests/layer/shaders > $OUT/truth$i.jsonl 2> $OUT/truth$i.err
done
for i in 1 2 3; do
  env $LAYER TALLY_BACKEND=driver TALLY_OUTPUT=$OUT/driver$i.json TALLY_COUNTERS=all \
    timeout 60 taskset -c ${CPU:-3} $B/bin/vk_workload $B/tests/layer/shaders > $OUT/driver$i.jsonl 2> $OUT/driver$i.err
done
timeout 60 taskset -c ${CPU:-3} $B/bin/vk_workload $B/tests/layer/shaders per-submission > $OUT/truth_ps.jsonl 2> $OUT/truth_ps.err
for g in render-pass command-buffer; do
  env $LAYER TALLY_BACKEND=driver TALLY_GRANULARITY=$g TALLY_OUTPUT=$OUT/none_$g.json TALLY_COUNTERS=all \
    timeout 60 taskset -c ${CPU:-3} $B/bin/vk_workload $B/tests/layer/shaders none > $OUT/none_$g.jsonl 2> $OUT/none_$g.err
  env $LAYER TALLY_BACKEND=driver TALLY_GRANULARITY=$g \
    timeout 60 taskset -c ${CPU:-3} $B/bin/vk_workload $B/tests/layer/shaders per-submission > $OUT/ps_$g.jsonl 2> $OUT/ps_$g.err
done
[ -x $B/bin/test_layer_calibrated ] && TALLY_TEST_VK_DRIVER_FILES=$ICD TALLY_LOG=info \
  timeout 120 $B/bin/test_layer_calibrated > $OUT/test_layer_calibrated.txt 2>&1
env $LAYER TALLY_BACKEND=simgpu TALLY_OUTPUT=$OUT/simgpu.json TALLY_COUNTERS=all \
  timeout 60 taskset -c ${CPU:-3} $B/bin/vk_workload $B/tests/layer/shaders > $OUT/simgpu.jsonl 2> $OUT/simgpu.err
env $LAYER TALLY_BACKEND=driver timeout 60 taskset -c ${CPU:-3} $B/bin/vk_perf_probe > $OUT/perf_driver.jsonl 2> $OUT/perf_driver.err
env $LAYER TALLY_BACKEND=simgpu timeout 60 taskset -c ${CPU:-3} $B/bin/vk_perf_probe > $OUT/perf_simgpu.jsonl 2> $OUT/perf_simgpu.err
timeout 60 taskset -c ${CPU:-3} $B/bin/vk_perf_probe > $OUT/perf_native.txt 2>&1
BENCH_ROUNDS=${ROUNDS:-7} BENCH_VK_DRIVER_FILES=$ICD timeout 200 taskset -c ${CPU:-3} $B/bin/bench_layer --backends > $OUT/bench.md 2> $OUT/bench.err
echo finished > $OUT/done
(cd $OUT && tar czf /tmp/results.tgz . && find . -type f -delete && mv /tmp/results.tgz $OUT/)
