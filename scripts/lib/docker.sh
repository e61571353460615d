# shellcheck shell=bash
# Docker engine, the local image registry and the base test image (no registry outside is
# reachable, so the image is imported from busybox-static).

REGISTRY_ADDR=127.0.0.1:5000
BASE_IMAGE=local/busybox:1
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

# build_base_image: a busybox rootfs (all applets linked in /bin, a page for httpd) imported as
# $BASE_IMAGE; `docker import` sets no config, hence PATH and CMD.
build_base_image() {
  local rootfs applet
  mkdir -p "$DATA/tmp"
  rootfs=$(mktemp -d "$DATA/tmp/busybox-rootfs.XXXXXX")
  mkdir -p "$rootfs"/{bin,etc,www,tmp,root,proc,sys,dev}
  chmod 1777 "$rootfs/tmp"
  cp /bin/busybox "$rootfs/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [[ $applet == busybox ]] || ln -s busybox "$rootfs/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
  echo 'hello from busybox' >"$rootfs/www/index.html"
  tar -C "$rootfs" -c . | docker import --change 'ENV PATH=/bin' \
    --change 'CMD ["/bin/httpd","-f","-p","8080","-h","/www"]' - "$BASE_IMAGE" >"$LOGS/base-image.log" 2>&1 || {
    show_log "$LOGS/base-image.log"
    die "docker import of $BASE_IMAGE failed"
  }
  rm -rf "$rootfs"
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
  if registry_has "$REGISTRY_IMAGE"; then
    say "image $REGISTRY_ADDR/$REGISTRY_IMAGE: present"
    return
  fi
  say "image $REGISTRY_ADDR/$REGISTRY_IMAGE: pushing"
  quietly docker-tag docker tag "$BASE_IMAGE" "$REGISTRY_ADDR/$REGISTRY_IMAGE"
  quietly docker-push docker push "$REGISTRY_ADDR/$REGISTRY_IMAGE"
}
