#!/usr/bin/env bash
# The international data run of issue 32 (docs/training.md, "International at scale"), made
# again from nothing or resumed where it stopped: every step is skipped when its result is
# already on disk, so the same command serves each session (and a new machine, whose disk
# holds none of it).
#
#     bash bench/intl_data_run.sh            # set up what is missing, then play on
#     GAMES=125000 WORKERS=2 bash bench/intl_data_run.sh
#
# The self-play engine is pinned to a venv of 2853df1 (the search with Scan 2.0's pruning
# margin; the run began again from game 0 on December 5, the earlier data having been lost
# with a machine) and the weights to ef7e000's file, so
# that every resumed part of the run plays the same search with the same evaluation; the
# run's settings are checked by `damka selfplay` itself, which refuses a directory written
# with others. Stop it with Ctrl-C or a kill: finished games are kept.
set -euo pipefail
cd "$(dirname "$0")/.."

DATA=${DAMKA_DATA:-$HOME/damka-data}
GAMES=${GAMES:-125000}
WORKERS=${WORKERS:-2}
ENGINE_COMMIT=2853df1
WEIGHTS_COMMIT=ef7e000
WEIGHTS_SHA=d397047ddf7daf975cbbcbd6b140e29eee71756f45c6fe907e4466f70c4c85b3
VENV=$DATA/selfplay-venv-$ENGINE_COMMIT
WEIGHTS=$DATA/international-$WEIGHTS_COMMIT.dkw
WEIGHTS2=$DATA/international-$WEIGHTS_COMMIT-layout2.dkw

mkdir -p "$DATA"

if [ ! -x "$VENV/bin/damka" ]; then
    echo "== the pinned self-play engine: a venv of $ENGINE_COMMIT"
    tree=$DATA/src-$ENGINE_COMMIT
    rm -rf "$tree"
    git worktree prune
    git worktree add --detach "$tree" "$ENGINE_COMMIT"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "$tree[train]"
fi

if [ ! -f "$WEIGHTS" ]; then
    echo "== the weights of $WEIGHTS_COMMIT"
    git show "$WEIGHTS_COMMIT:engine/weights/international.dkw" > "$WEIGHTS.part"
    mv "$WEIGHTS.part" "$WEIGHTS"
fi
echo "$WEIGHTS_SHA  $WEIGHTS" | sha256sum --check --quiet
# (ef7e000's file is of evaluation layout 1; the pinned engine reads layout 2, into which
# the upgrade carries every parameter, the new tables at zero)
if [ ! -f "$WEIGHTS2" ]; then
    echo "== ef7e000's weights in layout 2"
    "$VENV/bin/damka" tune --upgrade "$WEIGHTS" --out "$WEIGHTS2.part.dkw"
    mv "$WEIGHTS2.part.dkw" "$WEIGHTS2"
fi

# (slices already built are checked and reused: an interrupted build goes on)
echo "== the 5-piece databases (about 16 minutes on 2 workers when none are there)"
"$VENV/bin/damka" egtb build --variant international --pieces 5 --workers "$WORKERS" \
    --dir "$DATA/egtb"

echo "== self-play, up to $GAMES games"
exec "$VENV/bin/damka" selfplay --variant international --games "$GAMES" --seed 11 \
    --weights "$WEIGHTS2" --egtb "$DATA/egtb" --nodes 16000 --workers "$WORKERS" \
    --out "$DATA/international-g1-16k"
