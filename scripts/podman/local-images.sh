#!/usr/bin/env bash
# Makes, once, the images the stack needs from Docker Hub out of Debian's own packages, for a machine that cannot
# reach Docker Hub (a Debian mirror is enough), and prints the compose file's variables that name them:
#   eval "$(bash scripts/podman/local-images.sh)"
#   BUILDAH_FORMAT=docker podman-compose up --build
# The images, each made only when podman does not have it yet:
#   localhost/receiver-debian:bookworm-minbase      a debootstrapped Debian bookworm, minbase
#   localhost/receiver-base:node<version>-bookworm  that, with the project's own Node (node_modules/.bin/node) and
#                                                   this machine's npm: the Dockerfile's BASE
#   localhost/receiver-postgres:15-bookworm         Debian's PostgreSQL 15 (bookworm has no 16), set up from
#                                                   POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB as the official image
#   localhost/receiver-redis:7-bookworm             Debian's Redis 7.0
#   localhost/receiver-nats:2.9-bookworm            Debian's nats-server 2.9, with JetStream
# Progress goes to stderr; stdout holds only the export line.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/scripts/podman/containers.conf}"

say() { printf '[local-images] %s\n' "$*" >&2; }

NODE_BIN=$(readlink -f node_modules/.bin/node 2>/dev/null) || true
[ -x "$NODE_BIN" ] || { say "FAILED: no node_modules/.bin/node: run npm ci first"; exit 1; }
NODE_VERSION=$("$NODE_BIN" --version)
DEBIAN_IMAGE=localhost/receiver-debian:bookworm-minbase
NODE_BASE_IMAGE=localhost/receiver-base:node${NODE_VERSION#v}-bookworm
POSTGRES_IMAGE=localhost/receiver-postgres:15-bookworm
REDIS_IMAGE=localhost/receiver-redis:7-bookworm
NATS_IMAGE=localhost/receiver-nats:2.9-bookworm

# Several trees may run this at once on one machine: one makes the images, the others wait and find them made.
exec 9>/var/tmp/receiver-local-images.lock
flock 9

rootfs=""
trap '[ -z "$rootfs" ] || rm -rf "$rootfs"' EXIT

if ! podman image exists "$DEBIAN_IMAGE" || ! podman image exists "$NODE_BASE_IMAGE"; then
  rootfs=$(mktemp -d /var/tmp/receiver-rootfs.XXXXXX)
  say "making $DEBIAN_IMAGE (debootstrap: a few minutes, once)"
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >/dev/null
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc "$rootfs"/usr/share/man
  # Security fixes too: debootstrap sets up the release alone.
  echo 'deb http://deb.debian.org/debian-security bookworm-security main' >"$rootfs/etc/apt/sources.list.d/security.list"
  tar -C "$rootfs" -c . | podman import --quiet --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - "$DEBIAN_IMAGE" >/dev/null

  say "making $NODE_BASE_IMAGE (Node $NODE_VERSION + npm + the CA bundle)"
  install -D -m 755 "$NODE_BIN" "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/lib/node_modules"
  cp -a "$(npm root -g)/npm" "$rootfs/usr/local/lib/node_modules/"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  install -D -m 644 /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  tar -C "$rootfs" -c . | podman import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    - "$NODE_BASE_IMAGE" >/dev/null
fi

for service in postgres redis nats; do
  image_var="${service^^}_IMAGE"
  if ! podman image exists "${!image_var}"; then
    say "making ${!image_var} from Debian's packages"
    podman build --quiet --format docker --network host --build-arg "BASE=$DEBIAN_IMAGE" -t "${!image_var}" \
      -f "scripts/podman/$service.Containerfile" scripts/podman >/dev/null
  fi
done

printf 'export NODE_BASE_IMAGE=%s POSTGRES_IMAGE=%s REDIS_IMAGE=%s NATS_IMAGE=%s\n' "$NODE_BASE_IMAGE" "$POSTGRES_IMAGE" "$REDIS_IMAGE" "$NATS_IMAGE"
