#!/usr/bin/env bash
# Builds the project's Dockerfile, runs the image, waits for its health check,
# sends one real withdrawal and one booking change, checks the answers and that
# the process is not root, then stops the container (expecting exit code 0).
# Then runs docker-compose.yml itself with podman-compose: up, a withdrawal through
# each receiver, and a stop in the middle of a stream of withdrawals, after which
# PostgreSQL's ledger holds every withdrawal answered 200 and nothing else.
# No Docker engine or Docker Hub here: podman (runc, cgroupfs) builds against
# images made locally from a debootstrapped Debian (scripts/podman/local-images.sh):
# the base with the project's own Node 24 (the `node` package that npm ci installs
# into node_modules/.bin) and this machine's npm, PostgreSQL, Redis and NATS from Debian's packages.
# Fails loudly: any step that does not do what it should exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_BIN=$(readlink -f node_modules/.bin/node 2>/dev/null) || true
[ -x "$NODE_BIN" ] || { echo "[docker-smoke] FAILED: no node_modules/.bin/node: run npm ci first"; exit 1; }
NODE_VERSION=$("$NODE_BIN" --version)
# Names of this run's own: several trees run CI on one machine, and a shared name would be taken or replaced by another's.
IMAGE=localhost/receiver:smoke-$$
CONTAINER=receiver-smoke-$$
RUN_LOG=$(mktemp)
# The compose project's own name: its containers, network and volume are named after it.
PROJECT=receiver-smoke-$$
COMPOSE_LOG=$(mktemp)
ANSWERED=$(mktemp)
compose() { podman-compose -p "$PROJECT" "$@" >>"$COMPOSE_LOG" 2>&1; }
clean_up() {
  podman rm -f "$CONTAINER" >/dev/null 2>&1 || true
  compose down -v || true
  podman network rm -f "${PROJECT}_default" "${PROJECT}_probe" >/dev/null 2>&1 || true
  podman rmi "$IMAGE" >/dev/null 2>&1 || true
  rm -f "$RUN_LOG" "$COMPOSE_LOG" "$ANSWERED" "$ANSWERED.end"
}
trap clean_up EXIT
# A port the kernel just handed out (host networking: a fixed one could be taken by any socket on the machine).
free_port() { "$NODE_BIN" -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })"; }
PORT=${SMOKE_PORT:-$(free_port)}
export CONTAINERS_CONF="$PWD/scripts/podman/containers.conf"

say() { printf '[docker-smoke] %s\n' "$*"; }
fail() { say "FAILED: $*"; exit 1; }

if ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null || ! command -v podman-compose >/dev/null; then
  say "installing podman, buildah, runc, podman-compose and debootstrap from Debian's packages"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q podman buildah runc podman-compose debootstrap >/dev/null
fi

# The base, PostgreSQL and Redis images, made once (a few minutes the first time) and then found.
# (Not eval "$(…)" alone: eval would hide the script's failure.)
local_images=$(bash scripts/podman/local-images.sh) || fail "the local images could not be made"
eval "$local_images"
BASE_IMAGE=$NODE_BASE_IMAGE

say "building the Dockerfile against $BASE_IMAGE"
VERSION=$("$NODE_BIN" -p "require('./package.json').version")
REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)
podman build --quiet --format docker --network host --build-arg "BASE=$BASE_IMAGE" \
  --build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION" --build-arg "SOURCE=file://$PWD" -t "$IMAGE" . >/dev/null \
  || fail "the image does not build"
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
say "image $IMAGE: $((size / 1000000)) MB"

# The image is production: without SEED_FILE it must refuse to start rather than serve the public demo keys.
refusal=$(podman run --rm --network host -e PORT="$PORT" -e HOST=127.0.0.1 "$IMAGE" 2>&1) && fail "started without SEED_FILE"
printf '%s' "$refusal" | grep -q 'SEED_FILE' || fail "refused to start without naming SEED_FILE: $refusal"
say "without SEED_FILE the image refuses to start: $(printf '%s' "$refusal" | grep SEED_FILE | head -1)"

# The image has no tsx: the documented seed check is node dist/cli/seed-check.js. It checks under the image's settings
# (NODE_ENV=production), which refuse the demo's published keys as the service would; the demo file itself is valid.
podman run --rm --network host "$IMAGE" node dist/cli/seed-check.js seed/demo.json >/dev/null 2>"$RUN_LOG" && fail "the seed check in the image accepted the demo's published keys"
grep -q 'NODE_ENV=production refuses the demo keys' "$RUN_LOG" || { cat "$RUN_LOG"; fail "the seed check in the image refused the demo without saying why"; }
seed_check=$(podman run --rm --network host -e NODE_ENV=development "$IMAGE" node dist/cli/seed-check.js seed/demo.json 2>"$RUN_LOG") || { cat "$RUN_LOG"; fail "seed check in the image"; }
say "seed check in the image: the demo refused under NODE_ENV=production, and with NODE_ENV=development: $seed_check"

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

labels=$(podman image inspect --format '{{index .Labels "org.opencontainers.image.version"}} {{index .Labels "org.opencontainers.image.revision"}}' "$IMAGE")
expect "the image's OCI labels: version and revision" "$VERSION $REVISION" "$labels"

# docker-compose.yml itself, run by podman-compose as ops run it, on this run's own project name and free ports, with
# the image built above and the local PostgreSQL and Redis images. podman-compose 1.0.3 gives depends_on's conditions
# and stop_grace_period no effect: what holds here holds without them.
# Containers on a network of their own, their ports published: where podman cannot do that, the stack is not tried.
if ! network_refusal=$(podman network create "${PROJECT}_probe" 2>&1 >/dev/null && podman run --rm --network "${PROJECT}_probe" -p "127.0.0.1:$(free_port):9" \
    "$IMAGE" true 2>&1); then
  podman network rm -f "${PROJECT}_probe" >/dev/null 2>&1 || true
  say "the compose stack: SKIPPED, podman cannot run a container on a network of its own with a published port here: $(printf '%s' "$network_refusal" | tail -1)"
  say "passed"
  exit 0
fi
podman network rm -f "${PROJECT}_probe" >/dev/null 2>&1 || true

export RECEIVER_IMAGE=$IMAGE RECEIVER_A_PORT=$(free_port) RECEIVER_B_PORT=$(free_port) RECEIVER_A_METRICS_PORT=$(free_port) RECEIVER_B_METRICS_PORT=$(free_port)
declare -A stack_port=([a]=$RECEIVER_A_PORT [b]=$RECEIVER_B_PORT)
compose up -d || { cat "$COMPOSE_LOG"; fail "podman-compose up"; }
say "podman-compose up -d: project $PROJECT, receiver-a on port ${stack_port[a]}, receiver-b on ${stack_port[b]}"

# Up to three minutes: PostgreSQL makes its cluster first, and a receiver that started before it restarts.
for name in a b; do
  for attempt in $(seq 1 360); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${stack_port[$name]}/readyz")" = 200 ] && break
    [ "$attempt" = 360 ] && { podman-compose -p "$PROJECT" logs 2>&1 | tail -40; fail "receiver-$name never became ready"; }
    sleep 0.5
  done
done
# Contract section 13.4: both receivers reach NATS, and JetStream holds the stream they make when it is missing
# (NATS's monitoring port, asked from inside the compose network by the receiver image's own Node).
for name in a b; do
  for attempt in $(seq 1 240); do
    podman logs "${PROJECT}_receiver-${name}_1" 2>/dev/null | grep -q '"msg":"NATS connected"' && break
    [ "$attempt" = 240 ] && { podman logs "${PROJECT}_receiver-${name}_1" 2>&1 | grep NATS | tail -5; fail "receiver-$name never connected to NATS"; }
    sleep 0.5
  done
done
stream_subjects=$(podman exec "${PROJECT}_receiver-a_1" node -e "
  fetch('http://nats:8222/jsz?streams=true&config=true').then((answer) => answer.json()).then((jsz) => {
    const streams = (jsz.account_details ?? []).flatMap((account) => account.stream_detail ?? []);
    console.log(streams.filter((stream) => stream.name === 'RECEIVER_CHANGES').map((stream) => stream.config.subjects.join(',') + ' ' + stream.config.storage).join(';'));
  })" 2>&1)
expect "the JetStream stream the receivers made: subjects and storage" "receiver.changes.> file" "$stream_subjects"
migrate_state=$(podman inspect --format '{{.State.Status}} {{.State.ExitCode}}' "${PROJECT}_migrate_1")
expect "the migrate service, once the receivers are ready" "exited 0" "$migrate_state"
say "migrate: $(podman logs "${PROJECT}_migrate_1" 2>&1 | grep -c '^Waiting for the database' || true) wait(s) for PostgreSQL, then $(podman logs "${PROJECT}_migrate_1" 2>/dev/null | tail -1 | cut -c1-60)…"
say "restarts before serving: receiver-a $(podman inspect --format '{{.RestartCount}}' "${PROJECT}_receiver-a_1"), receiver-b $(podman inspect --format '{{.RestartCount}}' "${PROJECT}_receiver-b_1")"

stack_withdraw() {
  curl -s -w ' %{http_code}' -X POST "http://127.0.0.1:$1/v1/tokens/withdraw" -H 'Content-Type: application/json' \
    -d "{\"share_public\":\"pk_demo_PDR28_7f3a9c2e\",\"read_event\":\"token.withdrawn_created\",\"source_id\":\"PDR28\",\"destination_id\":\"ID001\",\"token_id\":\"2908926013012565\",\"transaction_id\":\"$2\",\"withdrawn_amount\":\"$3\",\"token_balance\":\"$4\"}"
}
expect "withdrawal through receiver-a" '{"success":true,"message":"Success"} 200' "$(stack_withdraw "${stack_port[a]}" 20240121000000000001 100.00 900.00)"
expect "withdrawal through receiver-b, on the balance receiver-a left" '{"success":true,"message":"Success"} 200' \
  "$(stack_withdraw "${stack_port[b]}" 20240121000000000002 100.00 800.00)"
printf '%s\n' 20240121000000000001 20240121000000000002 >"$ANSWERED"
for name in a b; do
  expect "receiver-$name's log lines name it" "receiver-$name" \
    "$(podman logs "${PROJECT}_receiver-${name}_1" 2>/dev/null | grep '"msg":"listening"' | tail -1 | sed -E 's/.*"instance":"([^"]+)".*/\1/')"
done

# A stream of withdrawals through receiver-a, one after another, until one is not answered 200: the stack is stopped
# in its middle. Each answered 200 is written down; the last answer says why the stream ended.
stream() {
  local balance=79900 n=3 answer
  while [ "$n" -le 600 ]; do
    # curl exits non-zero when the connection is refused: its answer is then " 000".
    answer=$(stack_withdraw "${stack_port[a]}" "$(printf '2024012100000%07d' "$n")" 1.00 "$((balance / 100)).$(printf '%02d' $((balance % 100)))") || true
    [ "${answer##* }" = 200 ] || { printf 'ended by: %s\n' "$answer" >"$ANSWERED.end"; return; }
    printf '2024012100000%07d\n' "$n" >>"$ANSWERED"
    balance=$((balance - 100))
    n=$((n + 1))
  done
  printf 'ended by: its end, before the stop\n' >"$ANSWERED.end"
}
stream &
stream_pid=$!
for _ in $(seq 1 240); do [ "$(wc -l <"$ANSWERED")" -ge 22 ] && break; sleep 0.25; done
compose stop || { cat "$COMPOSE_LOG"; fail "podman-compose stop"; }
wait "$stream_pid"
say "podman-compose stop during the stream: $(($(wc -l <"$ANSWERED") - 2)) withdrawal(s) of the stream answered 200, $(cat "$ANSWERED.end")"
rm -f "$ANSWERED.end"
for service in receiver-a receiver-b migrate redis postgres; do
  expect "$service after podman-compose stop (exit code)" "exited 0" "$(podman inspect --format '{{.State.Status}} {{.State.ExitCode}}' "${PROJECT}_${service}_1")"
done

# Nothing lost, nothing more: PostgreSQL started again holds exactly the withdrawals answered 200.
# (podman complains on stderr that it cannot reach systemd to time the health check; shown only if the start fails.)
podman start "${PROJECT}_postgres_1" >/dev/null 2>"$RUN_LOG" || { cat "$RUN_LOG"; fail "PostgreSQL does not start again"; }
for attempt in $(seq 1 240); do
  ledger=$(podman exec "${PROJECT}_postgres_1" psql -U receiver -d receiver -tAc \
    "SELECT transaction_id FROM ledger WHERE token_id = '2908926013012565' ORDER BY transaction_id" 2>/dev/null) && break
  [ "$attempt" = 240 ] && fail "PostgreSQL did not start again"
  sleep 0.5
done
[ "$ledger" = "$(sort "$ANSWERED")" ] || fail "the ledger is not the withdrawals answered 200: $(diff <(printf '%s\n' "$ledger") <(sort "$ANSWERED") | head -5)"
say "the ledger holds exactly the $(wc -l <"$ANSWERED") withdrawals answered 200"
say "passed"
