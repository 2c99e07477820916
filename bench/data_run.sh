#!/usr/bin/env bash
# The self-play data runs of issue 32 (docs/training.md, "International at scale"), made
# again from nothing or resumed where they stopped: every step is skipped when its result is
# already on disk, so the same command serves each session (and a new machine, whose disk
# holds none of it).
#
#     bash bench/data_run.sh                  # international: set up what is missing, play on
#     bash bench/data_run.sh international g2 # international's second generation
#     bash bench/data_run.sh international g3 # its third: the shipped weights of 41b0ddb
#     bash bench/data_run.sh international d1 # the shipped engine with random deviations
#     bash bench/data_run.sh international d2 # the same with the anchored weights of bc1e2f0
#     bash bench/data_run.sh international d3 # bc1e2f0's weights against ef7e000's
#     bash bench/data_run.sh english          # an 8x8 set's run (english, russian, ...)
#     bash bench/data_run.sh english g2       # English's second generation
#     bash bench/data_run.sh russian g2       # Russian's second generation
#     bash bench/data_run.sh russian d1       # Russian's shipped engine with random deviations
#     GAMES=125000 WORKERS=2 bash bench/data_run.sh international
#
# Each run pins the self-play engine to a venv of one commit and the weights to one commit's
# file of the rule set, so that every resumed part of a run plays the same search with the
# same evaluation; the run's settings are checked by `damka selfplay` itself, which refuses a
# directory written with others. Stop it with Ctrl-C or a kill: finished games are kept
# (games 0 .. N-1 of the seed, so the first N games of a run are the same on any machine).
#
# Generation 1 (g1): the engine of 6be6e44 (the search with Scan 2.0's pruning margin and
# Scan 3.1's reductions; the international run began again from game 0 on a new machine on
# December 5, the earlier data having been lost with the last one, before any game of the
# 2853df1 pin had been played there) with ef7e000's weights, upgraded to evaluation layout 2,
# which that engine reads. Generation 2 (g2): the engine of 16d64f2 with that commit's
# shipped weights, fitted to the first games of generation 1 (docs/training.md). English's
# generation 2: the engine of b95018e with that commit's English weights (generation 1's
# first 34,707 games fitted). Russian's generation 2: the engine of 32761f7 with its Russian
# weights (generation 1 fitted with the material held). International's generation 3: the
# engine of 41b0ddb with its international weights (generation 1 and the first games of
# generation 2 fitted, factored; both earlier runs were lost with a machine). International
# d1: the engine and weights of dd937bb (the shipped ones) with `--deviate 0.02`, a random
# move instead of a search at 2% of the moves, so that the data holds positions off the
# engine's own lines (docs/training.md, "Deviations"). Russian d1: the same for Russian (the
# engine and Russian weights of dd937bb, the shipped ones: generation 1 fitted, the material
# held). International d2: d1 again with the engine and weights of bc1e2f0 (g3 and d1's
# first 21,291 games fitted from dd937bb's file with `--anchor 0.5`), whose games no fit has
# seen yet. International d3: bc1e2f0's weights against ef7e000's (`--opponent`, upgraded to
# the pinned engine's layout; ef7e000's weights are the issue's baseline, about 100 Elo
# weaker), without deviations (in d2 a random move decides many of the games, so the labels
# of the positions before it say little of them), on the engine of 8863c17 (the first with
# `--opponent`; its search is bc1e2f0's): games decided by the evaluations alone.
set -euo pipefail
cd "$(dirname "$0")/.."

VARIANT=${1:-international}
GEN=${2:-g1}
DATA=${DAMKA_DATA:-$HOME/damka-data}
WORKERS=${WORKERS:-2}
# per run: the seed, the games to play (about 10 M quiet positions for international, the
# generations together), the pinned engine and weights, and the sha256 of the weights file
ENGINE_COMMIT=6be6e44
WEIGHTS_COMMIT=ef7e000
UPGRADE=layout2   # the pinned engine of generation 1 reads layout 2
EXTRA=()          # options of this run's selfplay beyond the common ones
OPPONENT_COMMIT=  # a second weights file's commit (`--opponent`, upgraded to the engine's layout)
case "$VARIANT-$GEN" in
    international-g1) SEED=11; TARGET=125000
        WEIGHTS_SHA=d397047ddf7daf975cbbcbd6b140e29eee71756f45c6fe907e4466f70c4c85b3 ;;
    international-g2) SEED=12; TARGET=70000
        ENGINE_COMMIT=16d64f2; WEIGHTS_COMMIT=16d64f2; UPGRADE=
        WEIGHTS_SHA=0c7ca786f5f38e5b79282af715ae386917158f7e311af8dc696b0e22a2075969 ;;
    international-g3) SEED=13; TARGET=125000
        ENGINE_COMMIT=41b0ddb; WEIGHTS_COMMIT=41b0ddb; UPGRADE=
        WEIGHTS_SHA=e684da4197a7a713592def743792ad468056a2dbd762a199e081c9d6ad43e793 ;;
    international-d1) SEED=14; TARGET=125000
        ENGINE_COMMIT=dd937bb; WEIGHTS_COMMIT=dd937bb; UPGRADE=; EXTRA=(--deviate 0.02)
        WEIGHTS_SHA=4e54526b7be6579e57e92b7573f5db0de27c5693d7892b61da7a844bf3f9c5d1 ;;
    # d2: 147,000 games, about 11.2 M quiet positions (69% of 111 a game), so that the
    # training split alone (90% of the games) holds the 10 M of item 1 (at 145,000 games it
    # held 9,984,125)
    international-d2) SEED=15; TARGET=147000
        ENGINE_COMMIT=bc1e2f0; WEIGHTS_COMMIT=bc1e2f0; UPGRADE=; EXTRA=(--deviate 0.02)
        WEIGHTS_SHA=27d915ebc377968534a39cce8ed4cc0c69cf43c8faadeb9941f11bad8123fd22 ;;
    international-d3) SEED=16; TARGET=60000
        ENGINE_COMMIT=8863c17; WEIGHTS_COMMIT=bc1e2f0; UPGRADE=
        OPPONENT_COMMIT=ef7e000
        OPPONENT_SHA=d397047ddf7daf975cbbcbd6b140e29eee71756f45c6fe907e4466f70c4c85b3
        WEIGHTS_SHA=27d915ebc377968534a39cce8ed4cc0c69cf43c8faadeb9941f11bad8123fd22 ;;
    english-g1) SEED=21; TARGET=40000
        WEIGHTS_SHA=6adeeebfac088575adb9d920ffb18e0d1c8188890150826ac1ccf29a9fedf7f0 ;;
    russian-g1) SEED=31; TARGET=40000
        WEIGHTS_SHA=f5bd385bce98d5bdc41e4fc43c6fcd0ff2baf8bd3945dd8ec40c58d1a99c561f ;;
    english-g2) SEED=22; TARGET=40000
        ENGINE_COMMIT=b95018e; WEIGHTS_COMMIT=b95018e; UPGRADE=
        WEIGHTS_SHA=7b7a615c1459afb39463e716316f09d3c65e60acc16de109a45195c9637f4709 ;;
    russian-g2) SEED=32; TARGET=40000
        ENGINE_COMMIT=32761f7; WEIGHTS_COMMIT=32761f7; UPGRADE=
        WEIGHTS_SHA=ecb7261d5c67509ef69bacc571e2be77853cbf1382877b0565507f8ff76082e0 ;;
    russian-d1) SEED=33; TARGET=40000
        ENGINE_COMMIT=dd937bb; WEIGHTS_COMMIT=dd937bb; UPGRADE=; EXTRA=(--deviate 0.02)
        WEIGHTS_SHA=78fbc65b01a05d6f01fd0479aa286b71d72567bf340a2b7d48197a75599f88c8 ;;
    *) echo "data_run.sh: no run planned for '$VARIANT $GEN' (international g1, g2, g3, d1, d2 or d3," \
            "english g1 or g2, russian g1, g2 or d1)" >&2
       exit 2 ;;
esac
GAMES=${GAMES:-$TARGET}
VENV=$DATA/selfplay-venv-$ENGINE_COMMIT
WEIGHTS=$DATA/$VARIANT-$WEIGHTS_COMMIT.dkw

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

# fetch_weights COMMIT SHA256 FILE: the rule set's weights file of COMMIT, fetched once and
# checked against its hash
fetch_weights() {
    if [ ! -f "$3" ]; then
        echo "== the $VARIANT weights of $1"
        git show "$1:engine/weights/$VARIANT.dkw" > "$3.part"
        mv "$3.part" "$3"
    fi
    echo "$2  $3" | sha256sum --check --quiet
}
# upgrade_weights SRC DEST: SRC in the pinned engine's evaluation layout (every parameter
# kept, the tables it lacked at zero), made once
upgrade_weights() {
    if [ ! -f "$2" ]; then
        echo "== $1 in $ENGINE_COMMIT's evaluation layout"
        "$VENV/bin/damka" tune --upgrade "$1" --out "$2.part.dkw"
        mv "$2.part.dkw" "$2"
    fi
}

fetch_weights "$WEIGHTS_COMMIT" "$WEIGHTS_SHA" "$WEIGHTS"
# (ef7e000's files are of evaluation layout 1; generation 1's engine reads layout 2, into
# which the upgrade carries every parameter, the new tables at zero)
PLAY_WEIGHTS=$WEIGHTS
if [ -n "$UPGRADE" ]; then
    PLAY_WEIGHTS=$DATA/$VARIANT-$WEIGHTS_COMMIT-$UPGRADE.dkw
    upgrade_weights "$WEIGHTS" "$PLAY_WEIGHTS"
fi

if [ -n "$OPPONENT_COMMIT" ]; then
    fetch_weights "$OPPONENT_COMMIT" "$OPPONENT_SHA" "$DATA/$VARIANT-$OPPONENT_COMMIT.dkw"
    OPPONENT=$DATA/$VARIANT-$OPPONENT_COMMIT-for-$ENGINE_COMMIT.dkw
    upgrade_weights "$DATA/$VARIANT-$OPPONENT_COMMIT.dkw" "$OPPONENT"
    EXTRA+=(--opponent "$OPPONENT")
fi

# (slices already built are checked and reused: an interrupted build goes on)
echo "== the 5-piece databases (international: about 16 minutes on 2 workers when none are there)"
"$VENV/bin/damka" egtb build --variant "$VARIANT" --pieces 5 --workers "$WORKERS" \
    --dir "$DATA/egtb"

echo "== self-play, up to $GAMES games"
exec "$VENV/bin/damka" selfplay --variant "$VARIANT" --games "$GAMES" --seed "$SEED" \
    --weights "$PLAY_WEIGHTS" --egtb "$DATA/egtb" --nodes 16000 --workers "$WORKERS" \
    ${EXTRA[@]+"${EXTRA[@]}"} --out "$DATA/$VARIANT-$GEN-16k"
