#!/usr/bin/env bash
# Builds the runtime base image local/node-base:20 from this machine's own binaries, because no
# image registry is reachable here: busybox-static (a shell and the usual tools), node, git with its
# HTTPS remote helper, iptables (the worker installs the egress policy: docs/security/egress.md),
# exactly the shared libraries `ldd` lists for them, and the CA bundle, all
# imported with `docker import`. Idempotent: the image carries a fingerprint of its inputs and is
# rebuilt only when one changed (or with --force).
#
# Usage: docker/build-base-image.sh [--force] [IMAGE]   (IMAGE defaults to local/node-base:20)
# Needs: docker, busybox-static, node, git, iptables (Debian packages busybox-static, nodejs/node, git,
# iptables).
set -euo pipefail

force=0
if [[ ${1:-} == --force ]]; then
  force=1
  shift
fi
image=${1:-local/node-base:20}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

node_bin=$(command -v node)
git_bin=$(command -v git)
git_core=$("$git_bin" --exec-path)
busybox=/bin/busybox
[[ -x $busybox ]] || { echo "error: $busybox missing (apt-get install -y busybox-static)" >&2; exit 1; }
xtables=$(command -v xtables-nft-multi || true)
[[ -x $xtables ]] || { echo "error: xtables-nft-multi missing (apt-get install -y iptables)" >&2; exit 1; }
xtables_lib=$(dirname "$(readlink -f "$(ldd "$xtables" | grep -o '/[^ ]*libxtables[^ ]*')")")/xtables
ca_bundle=/etc/ssl/certs/ca-certificates.crt
[[ -f $ca_bundle ]] || { echo "error: $ca_bundle missing (apt-get install -y ca-certificates)" >&2; exit 1; }

fingerprint=$(
  {
    sha256sum "$here/build-base-image.sh" "$node_bin" "$git_bin" "$git_core/git-remote-http" "$busybox" "$ca_bundle" "$xtables"
  } | sha256sum | cut -c1-32
)
current=$(docker image inspect --format '{{ index .Config.Labels "org.hostctl.base.fingerprint" }}' "$image" 2>/dev/null || true)
if ((force == 0)) && [[ $current == "$fingerprint" ]]; then
  echo "$image: up to date ($fingerprint)"
  exit 0
fi

rootfs=$(mktemp -d "${TMPDIR:-/tmp}/node-base.XXXXXX")
trap 'rm -rf "$rootfs"' EXIT
mkdir -p "$rootfs"/{bin,etc/ssl/certs,usr/bin,usr/local/bin,usr/lib,usr/lib64,tmp,root,home/app,proc,sys,dev}
# Debian's merged /usr: /lib and /lib64 are links into /usr, as on the host.
ln -s usr/lib "$rootfs/lib"
ln -s usr/lib64 "$rootfs/lib64"
chmod 1777 "$rootfs/tmp"
chown 10001:10001 "$rootfs/home/app"

cp "$busybox" "$rootfs/bin/busybox"
for applet in $("$busybox" --list); do
  [[ -e $rootfs/bin/$applet ]] || ln -s busybox "$rootfs/bin/$applet"
done

# copy_with_libs FILE DEST: FILE at DEST inside the rootfs, plus every library ldd resolves for it
# (kept at the path the loader looks for, with the directory resolved through /lib → /usr/lib).
copy_with_libs() {
  local file=$1 dest=$2 lib target
  mkdir -p "$rootfs$(dirname "$dest")"
  cp -L "$file" "$rootfs$dest"
  for lib in $(ldd "$file" | grep -o '/[^ ]*' | sort -u); do
    target="$(readlink -f "$(dirname "$lib")")/$(basename "$lib")"
    [[ -e $rootfs$target ]] && continue
    mkdir -p "$rootfs$(dirname "$target")"
    cp -L "$lib" "$rootfs$target"
  done
}

copy_with_libs "$node_bin" /usr/local/bin/node
copy_with_libs "$git_bin" /usr/bin/git
copy_with_libs "$git_core/git-remote-http" /usr/lib/git-core/git-remote-http
ln -s git-remote-http "$rootfs/usr/lib/git-core/git-remote-https"
ln -s ../../bin/git "$rootfs/usr/lib/git-core/git"
cp "$ca_bundle" "$rootfs$ca_bundle"
# iptables (nf_tables backend, like Docker's): one multi-call binary, named by its links, plus the
# match and target extensions it loads at run time (conntrack, addrtype, REJECT, …).
copy_with_libs "$xtables" /usr/sbin/xtables-nft-multi
for name in iptables iptables-restore iptables-save ip6tables ip6tables-restore ip6tables-save; do
  ln -s xtables-nft-multi "$rootfs/usr/sbin/$name"
done
mkdir -p "$rootfs$xtables_lib"
cp -L "$xtables_lib"/*.so "$rootfs$xtables_lib/"

cat >"$rootfs/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
app:x:10001:10001:app:/home/app:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$rootfs/etc/group" <<'EOF'
root:x:0:
app:x:10001:
nogroup:x:65534:
EOF
echo 'hosts: files dns' >"$rootfs/etc/nsswitch.conf"

"$rootfs/usr/local/bin/node" --version >/dev/null # the host can run what it copied
tar --numeric-owner -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/bin' \
  --change 'ENV HOME=/home/app' \
  --change "LABEL org.hostctl.base.fingerprint=$fingerprint" \
  --change "LABEL org.hostctl.base.node=$("$node_bin" --version)" \
  --change 'CMD ["node"]' \
  - "$image" >/dev/null
docker run --rm --network none "$image" node -e 'process.exit(0)'
docker run --rm --network none "$image" git --version >/dev/null
docker run --rm --network none "$image" iptables --version >/dev/null
echo "$image: built ($fingerprint, node $("$node_bin" --version))"
