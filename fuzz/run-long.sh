#!/bin/sh
# Long fuzz runs, one target at a time: sh fuzz/run-long.sh [target...] (default: all).
# Each target runs until 2 million executions or 15 minutes, whichever comes first, under a
# 2 GiB RSS limit, with fuzz/seeds/<target> as seed corpus and fuzz/corpus/<target> as the
# growing corpus; logs go to fuzz/logs/<target>.log, crashes to fuzz/artifacts/<target>/.
# FUZZ_BIN=dir runs prebuilt binaries from dir instead of `cargo +nightly fuzz run`.
set -u
cd "$(dirname "$0")"
targets=${*:-$(ls fuzz_targets | sed 's/\.rs$//')}
mkdir -p logs
for t in $targets; do
    mkdir -p "corpus/$t" "artifacts/$t"
    opts="-runs=2000000 -max_total_time=900 -rss_limit_mb=2048 -timeout=10 -artifact_prefix=artifacts/$t/ -print_final_stats=1"
    date -u +"start %Y-%m-%dT%H:%M:%SZ" > "logs/$t.log"
    if [ -n "${FUZZ_BIN:-}" ]; then
        "$FUZZ_BIN/$t" $opts "corpus/$t" "seeds/$t" >> "logs/$t.log" 2>&1
    else
        cargo +nightly fuzz run -O "$t" "corpus/$t" "seeds/$t" -- $opts >> "logs/$t.log" 2>&1
    fi
    echo "exit $?" >> "logs/$t.log"
    date -u +"end %Y-%m-%dT%H:%M:%SZ" >> "logs/$t.log"
    grep -E "stat::number_of_executed_units|^exit" "logs/$t.log" | tr '\n' ' ' | sed "s/^/$t: /"; echo
done
