#!/bin/sh
# The run, sweep and validate reports in a real browser (issue 19: "each plot checked by a screenshot in a real
# browser"). For each report, headless Chromium
#   1. loads index.html in a frame of a checker page and counts the images that decoded (naturalWidth > 0):
#      every plot must, and there must be as many as the report wrote;
#   2. takes a screenshot of the page, and of the same page with its images hidden (same layout): the plots
#      must put at least 0.3% of the screenshot's pixels (4,200 of 1000 x 1400) in ink (not near-white) beyond
#      what the text and tables alone do.
# Skipped (exit 77, and said so) where chromium or gnuplot is absent (make deps installs chromium), and in the
# sanitizer run, which checks hetsim's memory, not the browser's (report.sh runs the reports there).
set -u
case "${BUILD:-build}" in build-asan*) echo "checked in the plain run"; exit 77 ;; esac
H=${HETSIM:-bin/hetsim}
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
B=$(command -v chromium || command -v chromium-browser || true)
[ -n "$B" ] || { echo "chromium not found: the browser checks of the reports are skipped (make deps installs it)"; exit 77; }
command -v gnuplot > /dev/null 2>&1 || { echo "gnuplot not found"; exit 77; }
T=$(mktemp -d /tmp/hetsim-browser-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
# Chromium wants a writable home and no session bus; --no-sandbox because CI runs as root.
export HOME="$T/home"
mkdir -p "$HOME"
browse() { timeout 120 "$B" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
	--allow-file-access-from-files --virtual-time-budget=5000 "$@" 2> "$T/chromium.log"; }

check() { # check NAME DIR
	name=$1 dir=$2
	nimg=$(ls "$dir"/*.png "$dir"/*.svg 2>/dev/null | wc -l)
	cat > "$T/$name-check.html" <<EOF
<!doctype html><html><body><iframe id="f" src="file://$dir/index.html" width="1200" height="800"></iframe>
<script>
document.getElementById('f').onload = function () {
  var r;
  try {
    var im = Array.prototype.slice.call(this.contentDocument.images);
    r = im.length + ' ' + im.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  } catch (e) { r = 'error ' + e; }
  var p = document.createElement('pre'); p.id = 'r'; p.textContent = 'decoded=' + r; document.body.appendChild(p);
};
</script></body></html>
EOF
	got=$(browse --dump-dom "file://$T/$name-check.html" | sed -n 's/.*<pre id="r">decoded=\([^<]*\)<.*/\1/p')
	[ "$got" = "$nimg $nimg" ] || no "$name: images in the page / decoded by the browser: '$got', expected '$nimg $nimg' ($(tail -2 "$T/chromium.log"))"
	browse --window-size=1000,1400 --screenshot="$T/$name.png" "file://$dir/index.html" > /dev/null
	sed 's/<img /<img style="visibility:hidden" /g' "$dir/index.html" > "$dir/noimg.html"
	browse --window-size=1000,1400 --screenshot="$T/$name-noimg.png" "file://$dir/noimg.html" > /dev/null
	s1=$($PY tests/integration/lib/pngstat.py "$T/$name.png") || { no "$name: no screenshot"; return; }
	s0=$($PY tests/integration/lib/pngstat.py "$T/$name-noimg.png") || { no "$name: no screenshot without images"; return; }
	set -- $s1
	[ "$1 $2" = "1000 1400" ] || no "$name: screenshot is $1 x $2, expected 1000 x 1400"
	ink=$3
	set -- $s0
	ok=$($PY -c "print(1 if $ink - $3 >= 0.003 else 0)")
	[ "$ok" = 1 ] || no "$name: the plots add $ink - $3 of the page in ink, expected at least 0.003"
	echo "$name: $nimg images decoded; ink $ink of the page, $3 without the plots"
}

"$H" run --hdf5 "$T/run.h5" --hdf5-tasks scenarios/default.yaml > /dev/null || no "run --hdf5"
"$H" report "$T/run.h5" -o "$T/run" > /dev/null || no "report run"
check run "$T/run"
"$H" sweep -q scenarios/sweeps/llama3-8b-tp-pp.yaml -j 2 -o "$T/sw.csv" > /dev/null || no "sweep"
"$H" report "$T/sw.csv" -o "$T/sw" > /dev/null || no "report sweep"
check sweep "$T/sw"
"$H" validate --json scenarios/validation/korthikanti.yaml > "$T/val.json"
"$H" report "$T/val.json" -o "$T/val" > /dev/null || no "report validate"
check validate "$T/val"
# the check can fail: a report whose plot does not decode
sed 's/src="data:image\/png;base64,[^"]*"/src="data:image\/png;base64,AAAA"/' "$T/val/index.html" > "$T/val/broken.html"
mv "$T/val/broken.html" "$T/val/index.html"
out=$(fail=0; check broken "$T/val"; echo "fail=$fail")
case $out in *"fail=1"*) ;; *) no "a report whose plot does not decode passed the browser check: $out" ;; esac
exit $fail
