#!/bin/sh
# On the GPU machine, once per device call: sh apps/bench/src/gpu-kit/receive-kit.sh [run's arguments]
# Each call carries the GPU kit's checksum list and one or more of its parts (.inferq/gpu-kit/parts/, written by
# `npm run gpu-kit`). The parts are kept outside the working tree, in $INFERQ_KIT_STORE (a warm machine keeps it
# between calls: make the next call within ~30 s). When every part is there and intact, they are joined, checked
# against the whole archive's sha256, unpacked, and the kit's `run` is started with this script's arguments.
set -eu
PARTS=${INFERQ_KIT_PARTS:-.inferq/gpu-kit/parts}
STORE=${INFERQ_KIT_STORE:-/tmp/inferq-gpu-kit}
LIST=parts.sha256
[ -f "$PARTS/$LIST" ] || { echo "receive-kit: no $PARTS/$LIST: carry it with every part" >&2; exit 2; }
mkdir -p "$STORE/parts"
# A list from another build throws away the parts of that build.
if [ -f "$STORE/parts/$LIST" ] && ! cmp -s "$PARTS/$LIST" "$STORE/parts/$LIST"; then rm -f "$STORE/parts/"*; fi
cp "$PARTS/$LIST" "$STORE/parts/"
for f in "$PARTS"/*.part*; do [ -f "$f" ] && cp "$f" "$STORE/parts/"; done
cd "$STORE/parts"

archive=$(tail -n 1 "$LIST" | awk '{print $2}')
waiting=
for name in $(awk '$2 ~ /\.part[0-9]+$/ {print $2}' "$LIST"); do
  if [ ! -f "$name" ]; then waiting="$waiting $name"; continue; fi
  grep " $name\$" "$LIST" | sha256sum -c --quiet - || { rm -f "$name"; echo "receive-kit: $name is damaged and was dropped: carry it again" >&2; exit 1; }
done
if [ -n "$waiting" ]; then
  echo "receive-kit: have $(ls ./*.part* 2>/dev/null | wc -l) part(s) in $STORE/parts; still to carry:$waiting"
  exit 0
fi

echo "receive-kit: every part is here; joining and unpacking $archive"
# The part names sort in order (their numbers are zero-padded to one width).
cat $(awk '$2 ~ /\.part[0-9]+$/ {print $2}' "$LIST") > "$STORE/$archive"
rm -f ./*.part*
(cd "$STORE" && grep " $archive\$" "parts/$LIST" | sha256sum -c --quiet -) || { echo "receive-kit: the joined archive does not match its sha256" >&2; exit 1; }
rm -rf "$STORE/inferq-gpu-kit"
xz -T0 -dc "$STORE/$archive" | tar -C "$STORE" -xf -
rm -f "$STORE/$archive"
echo "receive-kit: unpacked into $STORE/inferq-gpu-kit"
exec "$STORE/inferq-gpu-kit/run" "$@"
