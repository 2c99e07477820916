#!/usr/bin/env bash
# A frozen copy of a self-play directory that a run is still writing, for fits that must see
# the same data (docs/training.md, "International at scale"): the meta.json of the moment and
# hard links of the chunks it names (no copy of the data; the run goes on undisturbed, since
# it only ever adds chunks and replaces meta.json whole).
#
#     bash bench/snapshot_data.sh ~/damka-data/international-g2-16k ~/damka-data/snap-c2
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: bash bench/snapshot_data.sh RUN_DIR NEW_DIR" >&2
    exit 2
fi
src=$1 dst=$2
if [ ! -f "$src/meta.json" ]; then
    echo "snapshot_data.sh: $src holds no meta.json (not a self-play directory)" >&2
    exit 2
fi
if [ -e "$dst" ]; then
    echo "snapshot_data.sh: $dst exists; name a new directory" >&2
    exit 2
fi
mkdir -p "$dst"
cp "$src/meta.json" "$dst/meta.json"  # first: it names only chunks already on disk
python3 - "$src" "$dst" <<'PY'
import json, os, sys
src, dst = sys.argv[1:]
with open(os.path.join(dst, "meta.json")) as f:
    meta = json.load(f)
for chunk in meta["chunks"]:
    os.link(os.path.join(src, chunk["file"]), os.path.join(dst, chunk["file"]))
print(f"{dst}: games 0 .. {meta['games_done'] - 1} of seed {meta['settings']['seed']}, "
      f"{meta['positions']:,} positions, {len(meta['chunks'])} chunks")
PY
