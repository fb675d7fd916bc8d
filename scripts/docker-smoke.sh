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
trap 'podman rm -f "$CONTAINER" >/dev/null 2>&1 || true; podman rmi "$IMAGE" >/dev/null 2>&1 || true; rm -f "$RUN_LOG"' EXIT
# A port the kernel just handed out (host networking: a fixed one could be taken by any socket on the machine).
PORT=${SMOKE_PORT:-$("$NODE_BIN" -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")}
ROOTFS=/var/tmp/receiver-base-rootfs
export CONTAINERS_CONF="$PWD/scripts/podman/containers.conf"

say() { printf '[docker-smoke] %s\n' "$*"; }
fail() { say "FAILED: $*"; exit 1; }

if ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null; then
  say "installing podman, buildah, runc and debootstrap from Debian's packages"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q podman buildah runc debootstrap >/dev/null
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

# The demo is run with the settings of the documented line (docs/OPERATIONS.md), so a line that cannot start fails here.
documented=$(grep -m1 '^docker run --rm -p 3000:3000 .* receiver ' docs/OPERATIONS.md) || fail "docs/OPERATIONS.md has no demo docker run line"
read -r -a documented_env <<<"$(printf '%s' "$documented" | grep -oE -- '-e [A-Z_]+=[^ ]+' | tr '\n' ' ')"
say "the documented line: $documented"

# Host networking: no bridge or port forwarding to set up; the service listens on $PORT on loopback.
# No systemd here to time the health check, so the script runs it itself.
# (podman still complains on stderr that it cannot reach systemd; that is shown only if the start fails.)
podman run -d --name "$CONTAINER" --network host --health-interval disable -e PORT="$PORT" -e HOST=127.0.0.1 "${documented_env[@]}" "$IMAGE" >/dev/null 2>"$RUN_LOG" \
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

uid=$(podman exec "$CONTAINER" sh -c 'grep ^Uid: /proc/1/status' | awk '{print $2}')
[ "$uid" != 0 ] || fail "the service runs as root"
say "service process uid: $uid (not root)"

podman stop -t 15 "$CONTAINER" >/dev/null 2>&1
code=$(podman inspect --format '{{.State.ExitCode}}' "$CONTAINER")
expect "exit code after podman stop (SIGTERM)" 0 "$code"
say "passed"
