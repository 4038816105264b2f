#!/usr/bin/env bash
# Parameter loading against a plain read of the same file, page cache
# dropped before each cold run (needs root for drop_caches; otherwise the
# runs are warm and say so). Usage: bench-load.sh C2PROVER FILE [RUNS]
set -u
BIN=$1 FILE=$2 RUNS=${3:-3}
drop() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null && echo cold || echo warm; }
for i in $(seq "$RUNS"); do
    state=$(drop); t0=$(date +%s%N); cat "$FILE" > /dev/null; t1=$(date +%s%N)
    echo "cat ($state): $(( (t1 - t0) / 1000000 )) ms"
    state=$(drop); t0=$(date +%s%N); "$BIN" info --check "$FILE" > /dev/null 2>&1; t1=$(date +%s%N)
    echo "c2prover info --check ($state): $(( (t1 - t0) / 1000000 )) ms"
done
ls -l "$FILE" | awk '{print "bytes:", $5}'
