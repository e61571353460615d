# shellcheck shell=bash
# Debian packages the dev stack needs; installs only the missing ones.

APT_PACKAGES=(docker.io docker-registry docker-compose pdns-server pdns-backend-sqlite3 caddy pebble busybox-static dnsutils
  chromium sqlite3 git curl restic socat)

ensure_apt_packages() {
  local missing=() pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  if ((${#missing[@]} == 0)); then
    say "apt packages: present"
    return
  fi
  ((EUID == 0)) || die "missing packages (${missing[*]}) and not root"
  say "apt packages: installing ${missing[*]}"
  (
    export DEBIAN_FRONTEND=noninteractive
    # No init system runs services here, and the packages' own service starts would grab ports
    # (pdns on 53, the registry on 5000): forbid them while installing, as Docker images do.
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
      chmod +x /usr/sbin/policy-rc.d
      trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    quietly apt-update apt-get update
    quietly apt-install apt-get install -y "${missing[@]}"
  )
}
