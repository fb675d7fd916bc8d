#!/usr/bin/env bash
# Builds the project's Dockerfile, runs the image, waits for its health check,
# sends one real withdrawal and one booking change, checks the answers and that
# the process is not root, then stops the container (expecting exit code 0).
# No Docker engine or Docker Hub here: podman (runc, cgroupfs) builds against a
# base image made locally from a debootstrapped Debian with the project's own Node 24 (the `node` package that
# npm ci installs into node_modules/.bin) and this machine's npm.
# Fails loudly: any step that does not do what it should exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_BIN=$(readlink -f node_modules/.bin/node 2>/dev/null) || true
[ -x "$NODE_BIN" ] || { echo "[docker-smoke] FAILED: no node_modules/.bin/node: run npm ci first"; exit 1; }
NODE_VERSION=$("$NODE_BIN" --version)
BASE_IMAGE=localhost/receiver-base:node${NODE_VERSION#v}-bookworm
# Names of this run's own: several trees run CI on one machine, and a shared name would be taken or replaced by another's.
IMAGE=localhost/receiver:smoke-$$
CONTAINER=receiver-smoke-$$
RUN_LOG=$(mktemp)
STACK_DATABASE=receiver_stack_$$
trap 'podman rm -f "$CONTAINER" "$CONTAINER-a" "$CONTAINER-b" >/dev/null 2>&1 || true; podman rmi "$IMAGE" >/dev/null 2>&1 || true; rm -f "$RUN_LOG"; dropdb -h 127.0.0.1 -U postgres --if-exists "$STACK_DATABASE" >/dev/null 2>&1 || true' EXIT
# A port the kernel just handed out (host networking: a fixed one could be taken by any socket on the machine).
PORT=${SMOKE_PORT:-$("$NODE_BIN" -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")}
ROOTFS=/var/tmp/receiver-base-rootfs
export CONTAINERS_CONF="$PWD/scripts/podman/containers.conf"

say() { printf '[docker-smoke] %s\n' "$*"; }
fail() { say "FAILED: $*"; exit 1; }

if ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null || ! command -v podman-compose >/dev/null; then
  say "installing podman, buildah, runc, podman-compose and debootstrap from Debian's packages"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q podman buildah runc podman-compose debootstrap >/dev/null
fi

if ! podman image exists "$BASE_IMAGE"; then
  say "making the base image $BASE_IMAGE (Debian bookworm minbase + Node $NODE_VERSION + the CA bundle)"
  rm -rf "$ROOTFS"
  debootstrap --variant=minbase bookworm "$ROOTFS" http://deb.debian.org/debian >/dev/null
  rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/usr/share/doc "$ROOTFS"/usr/share/man
  install -D -m 755 "$NODE_BIN" "$ROOTFS/usr/local/bin/node"
  mkdir -p "$ROOTFS/usr/local/lib/node_modules"
  cp -a "$(npm root -g)/npm" "$ROOTFS/usr/local/lib/node_modules/"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
  install -D -m 644 /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
  tar -C "$ROOTFS" -c . | podman import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    - "$BASE_IMAGE" >/dev/null
fi

say "building the Dockerfile against $BASE_IMAGE"
podman build --quiet --format docker --network host --build-arg "BASE=$BASE_IMAGE" -t "$IMAGE" . >/dev/null \
  || fail "the image does not build"
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
say "image $IMAGE: $((size / 1000000)) MB"

# The image is production: without SEED_FILE it must refuse to start rather than serve the public demo keys.
refusal=$(podman run --rm --network host -e PORT="$PORT" -e HOST=127.0.0.1 "$IMAGE" 2>&1) && fail "started without SEED_FILE"
printf '%s' "$refusal" | grep -q 'SEED_FILE' || fail "refused to start without naming SEED_FILE: $refusal"
say "without SEED_FILE the image refuses to start: $(printf '%s' "$refusal" | grep SEED_FILE | head -1)"

# The image has no tsx: the documented seed check is node dist/cli/seed-check.js.
seed_check=$(podman run --rm --network host "$IMAGE" node dist/cli/seed-check.js seed/demo.json 2>"$RUN_LOG") || { cat "$RUN_LOG"; fail "seed check in the image"; }
say "seed check in the image: $seed_check"

# The demo is run with the settings of the documented line (docs/OPERATIONS.md), so a line that cannot start fails here.
documented=$(grep -m1 '^docker run --rm -p 3000:3000 .* receiver ' docs/OPERATIONS.md) || fail "docs/OPERATIONS.md has no demo docker run line"
read -r -a documented_env <<<"$(printf '%s' "$documented" | grep -oE -- '-e [A-Z_]+=[^ ]+' | tr '\n' ' ')"
read -r -a documented_stop <<<"$(printf '%s' "$documented" | grep -oE -- '--stop-timeout [0-9]+')"
[ "${#documented_stop[@]}" = 2 ] || fail "the documented line sets no --stop-timeout above SHUTDOWN_TIMEOUT_MS's 10 s"
say "the documented line: $documented"

# Host networking: no bridge or port forwarding to set up; the service listens on $PORT on loopback.
# No systemd here to time the health check, so the script runs it itself.
# (podman still complains on stderr that it cannot reach systemd; that is shown only if the start fails.)
podman run -d --name "$CONTAINER" --network host --health-interval disable "${documented_stop[@]}" -e PORT="$PORT" -e METRICS_PORT=0 -e HOST=127.0.0.1 "${documented_env[@]}" "$IMAGE" >/dev/null 2>"$RUN_LOG" \
  || { cat "$RUN_LOG"; fail "the container does not start"; }

# Up to two minutes: a few seconds on a quiet machine, ten times that on a loaded one.
for attempt in $(seq 1 240); do
  if podman healthcheck run "$CONTAINER" >/dev/null 2>&1; then
    say "health check passed after $attempt attempt(s)"
    break
  fi
  [ "$attempt" = 240 ] && { podman logs "$CONTAINER" | tail -20; fail "the health check never passed"; }
  sleep 0.5
done

expect() {
  local what=$1 expected=$2 actual=$3
  [ "$actual" = "$expected" ] || fail "$what: expected $expected, got $actual"
  say "$what: $actual"
}

runtime=$(podman logs "$CONTAINER" 2>/dev/null | grep '"msg":"listening"' | sed -E 's/.*"node":"(v[0-9]+)\.[^"]*".*/\1/')
expect "Node major version in the start-up log line" "${NODE_VERSION%%.*}" "$runtime"

withdrawal=$(curl -s -w ' %{http_code}' -X POST "http://127.0.0.1:$PORT/v1/tokens/withdraw" -H 'Content-Type: application/json' \
  -d '{"share_public":"pk_demo_PDR28_7f3a9c2e","read_event":"token.withdrawn_created","source_id":"PDR28","destination_id":"ID001","token_id":"2908926013012565","transaction_id":"20240121000000000001","withdrawn_amount":"100.00","token_balance":"900.00"}')
expect "withdrawal" '{"success":true,"message":"Success"} 200' "$withdrawal"

booking=$(curl -s -w ' %{http_code}' -X PATCH "http://127.0.0.1:$PORT/v1/booking/PDR28/smoke-key-0001" -H 'Content-Type: application/json' \
  -d '{"share_secret":"sk_demo_PDR28_d41b8e60","booking_event":"modify","source_id":"PDR28","booking_id":"1396","guests_count":"3"}')
booking_answer=$(printf '%s' "$booking" | sed -E 's/"updated_at":"[^"]+"/"updated_at":"…"/')
expect "booking change" '{"success":true,"message":"Success","booking":{"source_id":"PDR28","booking_id":"1396","buyer_id":"","booking_date":"21-01-2024","booking_category":"hotel","supplier_id":"SUP-4471","property_name":"Hotel Aurora","property_country":"NL","guests_count":"3","room_count":"1","check_in":"14-02-2024","check_out":"17-02-2024","transaction_currency":"EUR","transaction_amount":"450.00","margin_category":"%","transaction_margin":"12.50","nonrefundable_amount":"150.00","refundable_amount":"300.00","firstnight_amount":"150.00","cancellation_days":"7","auth_code":"AUTH-77812","pre_auth":"true","status":"active","updated_at":"…"}} 200' "$booking_answer"

# /metrics is on the metrics listener alone (a port the kernel picked here: host networking), a 404 on the partners' port.
metrics_port=$(podman logs "$CONTAINER" 2>/dev/null | grep '"msg":"metrics listening"' | sed -E 's/.*"port":([0-9]+).*/\1/')
expect "withdrawals on the metrics listener" 'receiver_operations_total{operation="withdraw",outcome="accepted",reason=""} 1' \
  "$(curl -s "http://127.0.0.1:$metrics_port/metrics" | grep '^receiver_operations_total{operation="withdraw",outcome="accepted"')"
expect "/metrics on the partners' port" 404 "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/metrics")"

uid=$(podman exec "$CONTAINER" sh -c 'grep ^Uid: /proc/1/status' | awk '{print $2}')
[ "$uid" != 0 ] || fail "the service runs as root"
say "service process uid: $uid (not root)"

# The documented --stop-timeout, set on the container, is the time podman gives the drain.
podman stop "$CONTAINER" >/dev/null 2>&1
code=$(podman inspect --format '{{.State.ExitCode}}' "$CONTAINER")
expect "exit code after podman stop (SIGTERM)" 0 "$code"

# The compose file's topology (docker-compose.yml): the migrations once, then two named receivers on one PostgreSQL
# sharing their rate limits in Redis, each sent a withdrawal. PostgreSQL and Redis are this machine's, run as its
# processes (their images cannot be pulled here), in a database of this run's own.
free_port() { "$NODE_BIN" -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })"; }
createdb -h 127.0.0.1 -U postgres "$STACK_DATABASE" || fail "cannot create the stack's database"
STACK_DB_URL="postgres://postgres@127.0.0.1:5432/$STACK_DATABASE"
migrated=$(podman run --rm --network host -e DATABASE_URL="$STACK_DB_URL" "$IMAGE" node dist/cli/migrate.js 2>"$RUN_LOG") || { cat "$RUN_LOG"; fail "the migrate service"; }
say "migrate: $migrated"
declare -A stack_port
for name in a b; do
  stack_port[$name]=$(free_port)
  podman run -d --name "$CONTAINER-$name" --network host --health-interval disable --stop-timeout 15 \
    -e PORT="${stack_port[$name]}" -e METRICS_PORT=0 -e HOST=127.0.0.1 -e DATABASE_URL="$STACK_DB_URL" -e REDIS_URL=redis://127.0.0.1:6379 \
    -e REDIS_KEY_PREFIX="receiver-stack-$$:" -e SEED_FILE=demo -e INSTANCE_ID="receiver-$name" "$IMAGE" >/dev/null 2>"$RUN_LOG" \
    || { cat "$RUN_LOG"; fail "receiver-$name does not start"; }
done
for name in a b; do
  for attempt in $(seq 1 240); do
    podman healthcheck run "$CONTAINER-$name" >/dev/null 2>&1 && break
    [ "$attempt" = 240 ] && { podman logs "$CONTAINER-$name" | tail -20; fail "receiver-$name never became healthy"; }
    sleep 0.5
  done
done
stack_withdraw() {
  curl -s -w ' %{http_code}' -X POST "http://127.0.0.1:$1/v1/tokens/withdraw" -H 'Content-Type: application/json' \
    -d "{\"share_public\":\"pk_demo_PDR28_7f3a9c2e\",\"read_event\":\"token.withdrawn_created\",\"source_id\":\"PDR28\",\"destination_id\":\"ID001\",\"token_id\":\"2908926013012565\",\"transaction_id\":\"$2\",\"withdrawn_amount\":\"100.00\",\"token_balance\":\"$3\"}"
}
expect "withdrawal through receiver-a" '{"success":true,"message":"Success"} 200' "$(stack_withdraw "${stack_port[a]}" 20240121000000000001 900.00)"
expect "withdrawal through receiver-b, on the balance receiver-a left" '{"success":true,"message":"Success"} 200' "$(stack_withdraw "${stack_port[b]}" 20240121000000000002 800.00)"
expect "receiver-a's withdrawal again through receiver-b: a replay" 'true' \
  "$(curl -s -D - -o /dev/null -X POST "http://127.0.0.1:${stack_port[b]}/v1/tokens/withdraw" -H 'Content-Type: application/json' \
      -d '{"share_public":"pk_demo_PDR28_7f3a9c2e","read_event":"token.withdrawn_created","source_id":"PDR28","destination_id":"ID001","token_id":"2908926013012565","transaction_id":"20240121000000000001","withdrawn_amount":"100.00","token_balance":"900.00"}' \
    | tr -d '\r' | sed -n 's/^[Ii]dempotent-[Rr]eplayed: //p')"
for name in a b; do
  expect "receiver-$name's log lines name it" "receiver-$name" \
    "$(podman logs "$CONTAINER-$name" 2>/dev/null | grep '"msg":"listening"' | sed -E 's/.*"instance":"([^"]+)".*/\1/')"
  podman stop "$CONTAINER-$name" >/dev/null 2>&1
  expect "receiver-$name's exit code after podman stop" 0 "$(podman inspect --format '{{.State.ExitCode}}' "$CONTAINER-$name")"
done
say "passed"
