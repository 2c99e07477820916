#!/usr/bin/env bash
# Run one command on a quiet machine while a long self-play run (bench/data_run.sh), a
# `damka rescore` or a `damka spsa` is on: every such process group is stopped
# (SIGSTOP) for the command's length and continued after it (also when the command fails or
# is interrupted), so a timed match, a benchmark or CI never shares the cores with it and
# the run loses nothing but the time.
#
#     bash bench/paused.sh damka match --variant international ... --movetime 0.1
#     bash bench/paused.sh python bench/time_to_depth.py --variants international
set -uo pipefail
if [ $# -eq 0 ]; then
    echo "usage: bash bench/paused.sh COMMAND [ARG ...]" >&2
    exit 2
fi

own=$(ps -o pgid= -p $$ | tr -d ' ')
groups=$(ps -eo pgid=,args= | awk -v own="$own" '/damka (selfplay|rescore|spsa)/ && !/awk/ && $1 != own {print $1}' | sort -u)
resume() {
    for g in $groups; do kill -CONT -- "-$g" 2>/dev/null || true; done
}
trap resume EXIT
trap 'exit 130' INT TERM
for g in $groups; do
    kill -STOP -- "-$g" 2>/dev/null && echo "paused.sh: process group $g stopped" >&2
done
"$@"
status=$?
[ -n "$groups" ] && echo "paused.sh: stopped runs continued" >&2
exit $status
