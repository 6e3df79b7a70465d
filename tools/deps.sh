#!/bin/sh
# Installs the Debian 12 packages hetsim needs, or, when not root, prints the apt-get line and fails.
# Usage: tools/deps.sh [extra-package...]
# Optional packages are offered, not installed: libns3-dev (ns-3 3.37) builds the ns3 network model
# (sim/net/net_ns3.cc; `tools/deps.sh libns3-dev` installs it, then `make`).
set -u
PKGS="gcc make pkg-config libgsl-dev libyaml-dev libjansson-dev libhdf5-dev gnuplot-nox libopenmpi-dev openmpi-bin check $*"
OPTIONAL="libns3-dev"
for p in $OPTIONAL; do
	case " $* " in *" $p "*) continue ;; esac
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		echo "hetsim: optional: $p is not installed (the ns3 network model is not built; tools/deps.sh $p installs it)"
done
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "hetsim: installing missing Debian packages:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null 2>&1 || apt-get update
	apt-get install -y -qq $missing >/dev/null || apt-get install -y $missing || exit 1
	exit 0
fi
echo "hetsim: missing Debian packages:$missing"
echo "  run as root:  apt-get install -y$missing"
exit 1
