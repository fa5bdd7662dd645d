#!/usr/bin/env bash
# Refresh the browser libraries vendored into the docs site (dagster_streamt/docs_site/vendor/) from npm.
# Only maintainers run this, after changing the versions in vendor/package.json; users and CI never need npm.
set -euo pipefail
cd "$(dirname "$0")/.."
VENDOR=dagster_streamt/docs_site/vendor
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp "$VENDOR/package.json" "$WORK/"
(cd "$WORK" && npm install --no-audit --no-fund --ignore-scripts --omit=dev >/dev/null)
N="$WORK/node_modules"
cp "$N/cytoscape/dist/cytoscape.min.js" "$VENDOR/"
cp "$N/cytoscape/LICENSE" "$VENDOR/LICENSE.cytoscape.txt"
cp "$N/cytoscape-dagre/dist/cytoscape-dagre.min.js" "$VENDOR/"   # bundles @dagrejs/dagre and graphlib
cp "$N/cytoscape-dagre/LICENSE" "$VENDOR/LICENSE.cytoscape-dagre.txt"
cp "$N/@highlightjs/cdn-assets/highlight.min.js" "$VENDOR/"       # the common languages, SQL and YAML among them
cp "$N/@highlightjs/cdn-assets/styles/github.min.css" "$VENDOR/highlight-github.min.css"
cp "$N/@highlightjs/cdn-assets/LICENSE" "$VENDOR/LICENSE.highlightjs.txt"
# dagre's licence: from the package cytoscape-dagre was built with (install it only to read the file)
(cd "$WORK" && npm install --no-audit --no-fund --ignore-scripts --no-save @dagrejs/dagre@3 >/dev/null)
cp "$N/@dagrejs/dagre/LICENSE" "$VENDOR/LICENSE.dagre.txt"
cp "$N/@dagrejs/graphlib/LICENSE" "$VENDOR/LICENSE.graphlib.txt"
echo "vendored:"; (cd "$N" && for p in cytoscape cytoscape-dagre @highlightjs/cdn-assets; do
  echo "  $p $(node -p "require('./$p/package.json').version")"; done)
echo "now update the versions in $VENDOR/README.md and run: python3 -m pytest tests/docs"
