#!/bin/sh
# Regenerates docs/images/trace_in_viewer.png: vkcube (an unmodified Vulkan
# program) runs six frames under `tally run --trace` on the virtual clock
# (the simulated GPU's work back to back, the same picture on every run), and
# Chromium's trace viewer opens the trace. Not part of the build or the tests.
#
# Needs: a build in build/, xvfb-run, vkcube, Debian's chromium
# (apt-get install --no-install-recommends chromium) and playwright-core from
# npm in a scratch directory outside the repository:
#   mkdir /tmp/viewer && (cd /tmp/viewer && npm install playwright-core)
#   VIEWER_MODULES=/tmp/viewer/node_modules docs/images/trace_viewer_picture.sh
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
modules=${VIEWER_MODULES:?set VIEWER_MODULES to a node_modules holding playwright-core}
trace=$(mktemp --suffix=.json)
trap 'rm -f "$trace"' EXIT
TALLY_CLOCK=virtual xvfb-run -a "$root/build/bin/tally" run --trace "$trace" -- vkcube --c 6 >/dev/null
NODE_PATH=$modules HEIGHT=330 node "$root/docs/images/trace_viewer_picture.js" "$trace" \
    "$root/docs/images/trace_in_viewer.png"
