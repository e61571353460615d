#!/usr/bin/env bash
# Creates the secret files docker/compose.yml mounts, with random values, in docker/secrets/ (mode
# 0700; each file 0444 so the containers' non-root users can read their bind mount). Never
# overwrites an existing file: delete one to rotate it (and restart what uses it). The OIDC client
# secret comes from your identity provider: pass it as OIDC_CLIENT_SECRET or edit the file.
set -euo pipefail
dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/secrets"
mkdir -p "$dir"
chmod 700 "$dir"

random_hex() { od -An -tx1 -N "$1" /dev/urandom | tr -d ' \n'; }

# write NAME VALUE: creates secrets/NAME unless it exists.
write() {
  local file="$dir/$1"
  if [[ -e $file ]]; then
    echo "kept    $file"
    return
  fi
  (umask 077 && printf '%s\n' "$2" >"$file")
  chmod 444 "$file"
  echo "created $file"
}

# Hex only: the values sit inside URLs and config files without any escaping.
[[ -e $dir/postgres_password ]] || write postgres_password "$(random_hex 24)"
postgres_password=$(<"$dir/postgres_password")
write database_url "postgresql://hostctl:$postgres_password@127.0.0.1:5432/hostctl"

[[ -e $dir/redis.conf ]] || write redis.conf "requirepass $(random_hex 24)"
redis_password=$(sed -n 's/^requirepass //p' "$dir/redis.conf")
write redis_url "redis://:$redis_password@127.0.0.1:6379"

write session_secret "$(random_hex 32)"

# 256-bit key-encryption key, base64 (docs/secrets.md). Back it up: the database is unreadable without it.
write secrets_kek "$(head -c 32 /dev/urandom | base64 | tr -d '\n')"

[[ -e $dir/pdns_api_key ]] || write pdns_api_key "$(random_hex 24)"
write pdns_api.conf "api-key=$(<"$dir/pdns_api_key")"

if [[ -n ${OIDC_CLIENT_SECRET:-} ]]; then
  write oidc_client_secret "$OIDC_CLIENT_SECRET"
elif [[ ! -e $dir/oidc_client_secret ]]; then
  echo "note: $dir/oidc_client_secret is missing: write your provider's client secret there" >&2
fi
