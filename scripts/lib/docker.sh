# shellcheck shell=bash
# Docker engine, the local image registry and the base test image (no registry outside is
# reachable, so the image is imported from busybox-static).

REGISTRY_ADDR=127.0.0.1:5000
BASE_IMAGE=local/busybox:1
NODE_IMAGE=local/node:20
# The backup engine's image (docs/backups.md): restic and socat from Debian on the busybox rootfs.
# Version 2 added socat (the S3 target's in-container end of the relay); a new tag so hosts that
# built version 1 build it again.
RESTIC_IMAGE=local/hostctl-restic:2
REGISTRY_IMAGE=busybox:1

docker_up() { docker info >/dev/null 2>&1; }

# Engine settings the platform relies on, in daemon.json (not flags) so every later start of dockerd,
# including the fault suite's restart, keeps them:
# - default-address-pools: every service gets its own bridge network; Docker's default pools allow
#   only ~31, which would cap a host at about 30 services. A /10 cut into /24s allows 16,384.
# - live-restore: containers keep running (and keep their filesystem mounts) across a daemon
#   restart. Without it Docker 20.10 can leave a stopped container's overlay mount behind, and
#   that container can then never be removed ("device or resource busy").
DOCKER_DAEMON_JSON=/etc/docker/daemon.json
DOCKER_DAEMON_CONFIG='{
  "default-address-pools": [{ "base": "10.128.0.0/10", "size": 24 }],
  "live-restore": true
}'
# What an earlier version of this script wrote: replaced, since it is ours.
DOCKER_DAEMON_CONFIG_V1='{
  "default-address-pools": [{ "base": "10.128.0.0/10", "size": 24 }]
}'
ensure_daemon_config() {
  if [ -f "$DOCKER_DAEMON_JSON" ]; then
    local current
    current=$(cat "$DOCKER_DAEMON_JSON")
    [ "$current" = "$DOCKER_DAEMON_CONFIG" ] && return
    if [ "$current" != "$DOCKER_DAEMON_CONFIG_V1" ]; then
      say "docker: $DOCKER_DAEMON_JSON is not ours; make sure it sets default-address-pools and live-restore"
      return
    fi
  fi
  mkdir -p "$(dirname "$DOCKER_DAEMON_JSON")"
  printf '%s\n' "$DOCKER_DAEMON_CONFIG" >"$DOCKER_DAEMON_JSON"
  say "docker: wrote $DOCKER_DAEMON_JSON (address pools, live-restore; applies at the next dockerd start)"
}

ensure_dockerd() {
  ensure_daemon_config
  if docker_up; then
    say "docker: running"
    return
  fi
  say "docker: starting dockerd"
  start_bg dockerd dockerd
  wait_until 60 docker_up || {
    show_log "$LOGS/dockerd.log"
    die "dockerd did not answer within 60s"
  }
}

# restart_dockerd: stops whichever dockerd runs (ours or one a package script started) and starts
# ours. Containers keep running across it (live-restore).
restart_dockerd() {
  local pid
  stop_bg dockerd 30
  for pid in $(pgrep -x dockerd); do kill -TERM "$pid" 2>/dev/null || true; done
  wait_until 30 bash -c '! pgrep -x dockerd' || die "dockerd did not stop within 30s"
  start_bg dockerd dockerd
  wait_until 60 docker_up || {
    show_log "$LOGS/dockerd.log"
    die "dockerd did not answer within 60s after a restart"
  }
}

default_bridge_works() {
  ip link show docker0 >/dev/null 2>&1 &&
    docker run --rm --network bridge "$BASE_IMAGE" true >"$LOGS/docker-bridge.log" 2>&1
}

# ensure_default_bridge: on a fresh machine the engine's first start has been seen to come up
# without its default bridge docker0 ("could not find bridge docker0"), which breaks every
# container on the default network and every RUN step of a classic build. A restart of the engine
# creates it; if that does not help, stop here with the reason rather than fail tests later.
ensure_default_bridge() {
  if default_bridge_works; then
    say "docker: default bridge docker0 works"
    return
  fi
  warn "docker: the default bridge docker0 is missing or broken ($(tail -n 1 "$LOGS/docker-bridge.log" 2>/dev/null)); restarting dockerd"
  restart_dockerd
  default_bridge_works || {
    show_log "$LOGS/docker-bridge.log"
    die "docker: the default bridge docker0 still does not work after restarting dockerd; check 'ip link show docker0' and $LOGS/dockerd.log"
  }
  say "docker: default bridge docker0 repaired by a dockerd restart"
}

ensure_registry() {
  local dir="$DATA/registry"
  if http_ok "http://$REGISTRY_ADDR/v2/"; then
    say "registry: running on $REGISTRY_ADDR"
    return
  fi
  port_busy 5000 && die "127.0.0.1:5000 is taken by something that is not an image registry"
  mkdir -p "$dir/storage"
  cat >"$dir/config.yml" <<YAML
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $dir/storage
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
YAML
  say "registry: starting on $REGISTRY_ADDR"
  start_bg registry docker-registry serve "$dir/config.yml"
  wait_until 30 http_ok "http://$REGISTRY_ADDR/v2/" || {
    show_log "$LOGS/registry.log"
    die "registry did not answer within 30s"
  }
}

# busybox_rootfs DIR: a busybox root filesystem (every applet linked in /bin, /usr/bin/env for
# scripts' shebangs, users root, node and nobody, a page for httpd).
busybox_rootfs() {
  local rootfs=$1 applet
  mkdir -p "$rootfs"/{bin,etc,www,tmp,root,proc,sys,dev,home/node,usr/bin}
  chmod 1777 "$rootfs/tmp"
  cp /bin/busybox "$rootfs/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [[ $applet == busybox ]] || ln -s busybox "$rootfs/bin/$applet"
  done
  ln -s ../../bin/busybox "$rootfs/usr/bin/env"
  printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000:node:/home/node:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnode:x:1000:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
  chown 1000:1000 "$rootfs/home/node"
  echo 'hello from busybox' >"$rootfs/www/index.html"
}

# import_rootfs DIR IMAGE CHANGE...: imports DIR as IMAGE (`docker import` sets no config, hence
# the --change options) and removes DIR.
import_rootfs() {
  local rootfs=$1 image=$2 log
  shift 2
  log="$LOGS/image-${image//[^a-z0-9]/-}.log"
  tar -C "$rootfs" -c . | docker import "$@" - "$image" >"$log" 2>&1 || {
    show_log "$log"
    die "docker import of $image failed"
  }
  rm -rf "$rootfs"
}

# build_base_image: the busybox rootfs imported as $BASE_IMAGE, serving /www on 8080 by default.
build_base_image() {
  local rootfs
  mkdir -p "$DATA/tmp"
  rootfs=$(mktemp -d "$DATA/tmp/busybox-rootfs.XXXXXX")
  busybox_rootfs "$rootfs"
  import_rootfs "$rootfs" "$BASE_IMAGE" --change 'ENV PATH=/bin' \
    --change 'CMD ["/bin/httpd","-f","-p","8080","-h","/www"]'
}

# build_node_image: the busybox rootfs plus this machine's Node.js, its shared libraries and npm,
# imported as $NODE_IMAGE: the base image of the Dockerfiles the ai method generates for Node.js
# repositories, since no registry outside is reachable to pull node:20-slim from.
build_node_image() {
  local rootfs node lib
  node=$(readlink -f "$(command -v node)")
  mkdir -p "$DATA/tmp"
  rootfs=$(mktemp -d "$DATA/tmp/node-rootfs.XXXXXX")
  busybox_rootfs "$rootfs"
  mkdir -p "$rootfs/usr/local/bin" "$rootfs/usr/local/lib/node_modules"
  cp "$node" "$rootfs/usr/local/bin/node"
  for lib in $(ldd "$node" | grep -o '/[^ ]*'); do
    mkdir -p "$rootfs$(dirname "$lib")"
    cp -L "$lib" "$rootfs$lib"
  done
  cp -r "$(npm root -g 2>/dev/null)/npm" "$rootfs/usr/local/lib/node_modules/npm"
  rm -f "$rootfs/usr/local/lib/node_modules/npm/npmrc" # this machine's built-in settings (a CA file path the image lacks)
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  import_rootfs "$rootfs" "$NODE_IMAGE" --change 'ENV PATH=/usr/local/bin:/bin' --change 'CMD ["node"]'
}

# build_restic_image: the busybox rootfs plus this machine's restic and socat with their shared
# libraries: backups and restores run in short-lived containers of it, never with restic on the
# host (docs/backups.md). socat joins the container's loopback to the worker's S3 relay socket;
# the CA bundle lets restic check an https endpoint's certificate.
build_restic_image() {
  local rootfs binary name lib
  mkdir -p "$DATA/tmp"
  rootfs=$(mktemp -d "$DATA/tmp/restic-rootfs.XXXXXX")
  busybox_rootfs "$rootfs"
  for name in restic socat; do
    binary=$(readlink -f "$(command -v "$name")")
    cp "$binary" "$rootfs/bin/$name"
    for lib in $(ldd "$binary" | grep -o '/[^ ]*'); do
      mkdir -p "$rootfs$(dirname "$lib")"
      cp -L "$lib" "$rootfs$lib"
    done
  done
  # The S3 target over https: Go reads the trusted roots from this file (Debian's ca-certificates).
  mkdir -p "$rootfs/etc/ssl/certs"
  cp -L /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  import_rootfs "$rootfs" "$RESTIC_IMAGE" --change 'ENV PATH=/bin' --change 'ENV HOME=/tmp' \
    --change 'CMD ["restic","version"]'
}

registry_has() {
  curl -fs --noproxy '*' --max-time 5 -o /dev/null -I \
    -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
    -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "http://$REGISTRY_ADDR/v2/${1%%:*}/manifests/${1##*:}"
}

ensure_base_image() {
  if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    say "image $BASE_IMAGE: present"
  else
    say "image $BASE_IMAGE: building from busybox-static"
    build_base_image
  fi
  if docker image inspect "$NODE_IMAGE" >/dev/null 2>&1; then
    say "image $NODE_IMAGE: present"
  else
    say "image $NODE_IMAGE: building from this machine's Node.js"
    build_node_image
  fi
  if docker image inspect "$RESTIC_IMAGE" >/dev/null 2>&1; then
    say "image $RESTIC_IMAGE: present"
  else
    say "image $RESTIC_IMAGE: building from this machine's restic"
    build_restic_image
  fi
  if registry_has "$REGISTRY_IMAGE"; then
    say "image $REGISTRY_ADDR/$REGISTRY_IMAGE: present"
    return
  fi
  say "image $REGISTRY_ADDR/$REGISTRY_IMAGE: pushing"
  quietly docker-tag docker tag "$BASE_IMAGE" "$REGISTRY_ADDR/$REGISTRY_IMAGE"
  quietly docker-push docker push "$REGISTRY_ADDR/$REGISTRY_IMAGE"
}
