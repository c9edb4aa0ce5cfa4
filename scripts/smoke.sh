#!/usr/bin/env bash
# The README's set-up as a user runs it: `npm start` on a fresh data directory must serve GraphQL and
# /v1 on its port, print the development key, and accept a write with that key. Stops the server after.
set -euo pipefail
port=${SMOKE_PORT:-4789}
dir=$(mktemp -d)
log="$dir/start.log"
PORT=$port DATA_DIR="$dir/data" setsid npm start >"$log" 2>&1 &
pid=$!
cleanup() { kill -TERM -- "-$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
  sleep 1
done
curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || { echo "smoke: server did not become ready"; cat "$log"; exit 1; }
key=$(grep -o 'nftgw_[A-Za-z0-9_-]*' "$log" | head -n 1)
[ -n "$key" ] || { echo "smoke: no development key printed"; cat "$log"; exit 1; }
curl -fsS "http://127.0.0.1:$port/v1/collections?limit=2&include_assets=true" | grep -q '"contract_address"'
curl -fsS -X POST "http://127.0.0.1:$port/graphql" -H 'content-type: application/json' \
  -d '{"query":"{ categories(limit: 3) { result { id name } } }"}' | grep -q '"categories"'
curl -fsS -X POST "http://127.0.0.1:$port/v1/collections" -H "access-token: $key" -H 'content-type: application/json' \
  -d '{"contract_address":"0x00000000000000000000000000000000000501e5","chain_id":"1","name":"Smoke"}' | grep -q '"slug":"smoke"'
curl -fsS "http://127.0.0.1:$port/v1/orders?limit=5" | grep -q '"status":"completed"'
curl -fsS "http://127.0.0.1:$port/v1/assets?status=listed&limit=5" | grep -q '"order_type":"dutch_auction"'
curl -fsS -H 'accept: text/html' "http://127.0.0.1:$port/graphql" | grep -qi 'sandbox'
# Only one process opens an embedded data directory: a second server refuses, naming the first.
if PORT=$((port + 1)) DATA_DIR="$dir/data" timeout 60 node dist/src/main.js >"$dir/second.log" 2>&1; then
  echo "smoke: a second server opened the same data directory"; exit 1
fi
grep -q "is in use by process" "$dir/second.log" || { echo "smoke: the second server did not say why"; cat "$dir/second.log"; exit 1; }
# Commands reach the running server's embedded database instead.
user_key=$(DATA_DIR="$dir/data" timeout 120 npm run --silent apikey -- create --address 0x00000000000000000000000000000000000a11ce | tail -n 1)
curl -fsS -X POST "http://127.0.0.1:$port/v1/collections" -H "access-token: $user_key" -H 'content-type: application/json' \
  -d '{"contract_address":"0x00000000000000000000000000000000000a11ce","chain_id":"137","name":"Alice"}' | grep -q '"owner":"0x00000000000000000000000000000000000a11ce"'
# A process manager signals the process it started: SIGTERM to npm's own PID must stop the server itself.
server_pid=$(pgrep -f "dist/src/main.js" -s "$(ps -o sid= -p "$pid" | tr -d ' ')" | head -n 1)
[ -n "$server_pid" ] || { echo "smoke: no server process under npm start"; exit 1; }
kill -TERM "$pid"
for _ in $(seq 1 100); do
  if ! kill -0 "$server_pid" 2>/dev/null && ! curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then break; fi
  sleep 0.1
done
if kill -0 "$server_pid" 2>/dev/null; then echo "smoke: SIGTERM to npm start left the server (pid $server_pid) running"; exit 1; fi
if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then echo "smoke: the port still answers after SIGTERM to npm start"; exit 1; fi
echo "smoke: npm start served GraphQL, /v1 (with the demo market) and the Sandbox page on port $port, and stopped on SIGTERM to npm"
