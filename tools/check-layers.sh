#!/bin/sh
# make check-layers: the library's folders form layers, bottom first; a file may include headers of its own
# folder and of folders below it, never above (DESIGN.md, docs/architecture.md). Prints each include that
# breaks the order as `file:line: folder includes HEADER of layer ABOVE` and exits 1; exits 0 when there are none.
# kernels/graph_reader.h is libc-only and shared with the reference executor, so it counts as the bottom layer.
# tests/, bench/ and kernels/*.cu sit outside the order and may include anything.
set -u
cd "$(dirname "$0")/.." || exit 2
LAYERS="kernels sim/base config sim/engine topology calib models sim/coll sim/net sim/fabric sim/exec sim/study
traces reports sim/cli"
rank() { # the position of a path's folder in LAYERS, or nothing
	i=0; for l in $LAYERS; do
		case "$1" in "$l"/*) case "${1#"$l"/}" in */*) ;; *) echo $i; return ;; esac ;; esac
		i=$((i + 1))
	done
}
bad=0; n=0
for l in $LAYERS; do
	for f in "$l"/*.c "$l"/*.h; do
		[ -f "$f" ] || continue
		n=$((n + 1)); rf=$(rank "$f")
		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r hit; do
			line=${hit%%:*}; inc=$(printf '%s' "$hit" | sed 's/.*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/')
			ri=$(rank "$inc")
			[ -n "$ri" ] || continue # a header outside the layers (a system or kernels/*.cu one)
			if [ "$ri" -gt "$rf" ]; then
				echo "$f:$line: $(dirname "$f") includes $inc, of a layer above it"
			fi
		done
	done
done > "${TMPDIR:-/tmp}/check-layers.$$"
if [ -s "${TMPDIR:-/tmp}/check-layers.$$" ]; then
	cat "${TMPDIR:-/tmp}/check-layers.$$"
	echo "check-layers: $(wc -l < "${TMPDIR:-/tmp}/check-layers.$$") includes break the layer order (bottom first: $(echo $LAYERS))"
	bad=1
fi
rm -f "${TMPDIR:-/tmp}/check-layers.$$"
[ $bad = 0 ] && echo "check-layers: $n files, every include points down the layers"
exit $bad
