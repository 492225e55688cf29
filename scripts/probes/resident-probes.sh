#!/usr/bin/env bash
# One device call's worth of resident-latency probes (GPU machine, repository root; ~1 min of
# device time after ~1 min of parallel nvcc). Builds scripts/probes/resident_latency.cu as:
#   base   the resident perception body as shipped (host p50/p99/p99.9, output hash)
#   st     the same with clock64 stamps (where thread 0's cycles go, per stage)
#   e41    an empty body with Graph A's 41 input / 13 output words (the protocol's own cost)
#   e1     an empty body with 1 / 1 words (against the anchor's ping-pong)
# base and e1 run again pinned to one core (taskset), and under SCHED_FIFO where allowed (chrt):
# whether the p99.9 is the host's scheduling (it moves) or the bus and device (it does not).
# The output hash is a function of the body's bits only: a change meant to keep them (the
# level-2 column sums of stop 37 did) leaves it as it was (3456cd1f9e697e2e at 300000 steps).
# then the anchor (doorbell_probe.cu, path as its first argument, default ../shared/anchors) and
# the memcheck probe for the planned-loop finding (scripts/probes/while_memcheck.cu).
set -u
cd "$(dirname "$0")/../.."
anchor=${1:-../shared/anchors/doorbell_probe.cu}
steps=${STEPS:-300000}
b=$(mktemp -d)
f="-O3 -arch=sm_90 -Ikernels -diag-suppress 128,177,550"
p=scripts/probes/resident_latency.cu
nvcc $f -o "$b/base" $p &
nvcc $f -DKG_PROBE_STAMPS -o "$b/st" $p &
nvcc $f -DKG_PROBE_ECHO_IN=41 -DKG_PROBE_ECHO_OUT=13 -o "$b/e41" $p &
nvcc $f -DKG_PROBE_ECHO_IN=1 -DKG_PROBE_ECHO_OUT=1 -o "$b/e1" $p &
nvcc -O3 -arch=sm_90 -o "$b/wm" scripts/probes/while_memcheck.cu &
[ -f "$anchor" ] && nvcc -O3 -arch=sm_90 -o "$b/db" "$anchor" &
wait
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm --format=csv,noheader
for v in base e41 e1 st base; do
  echo "== $v"
  "$b/$v" "$steps"
done
for v in base e1; do
  echo "== $v pinned (taskset -c 2)"; taskset -c 2 "$b/$v" "$steps"
  echo "== $v pinned, SCHED_FIFO 50"; chrt -f 50 taskset -c 2 "$b/$v" "$steps" || echo "(chrt refused)"
done
[ -x "$b/db" ] && { echo "== anchor"; "$b/db"; }
echo "== while_memcheck plain"; "$b/wm" 40; echo "rc $?"
echo "== while_memcheck under memcheck"; compute-sanitizer --tool memcheck "$b/wm" 40 2>&1 | tail -15
echo "== while_memcheck under memcheck, a stream per round"; compute-sanitizer --tool memcheck "$b/wm" 40 newstream 2>&1 | tail -15
