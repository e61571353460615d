# shellcheck shell=bash
# PowerDNS (authoritative, sqlite backend): DNS on 127.0.0.1:5300, HTTP API on 127.0.0.1:8081.

PDNS_DIR="$DATA/pdns"
PDNS_API=http://127.0.0.1:8081/api/v1/servers/localhost

pdns_api_ok() { http_ok -H "X-API-Key: $1" "$PDNS_API"; }

# running_pdns_key: the api-key of a pdns_server already listening on 8081 (e.g. one started from
# another checkout of this repo), read from its own config dir.
running_pdns_key() {
  local pid dir
  pid=$(ss -Hltnp 'sport = :8081' 2>/dev/null | grep -o 'pdns_server",pid=[0-9]*' | head -n 1 | cut -d= -f2)
  [[ -n $pid ]] || return 1
  dir=$(tr '\0' '\n' <"/proc/$pid/cmdline" | sed -n 's/^--config-dir=//p')
  [[ -n $dir && -f $dir/pdns.conf ]] || return 1
  sed -n 's/^api-key=//p' "$dir/pdns.conf"
}

# ensure_pdns ZONE: PowerDNS running with our API key, serving ZONE.
ensure_pdns() {
  local key other
  key=$(secret PDNS_API_KEY 32)
  if pdns_api_ok "$key"; then
    say "powerdns: running"
  elif port_busy 8081; then
    if ! other=$(running_pdns_key) || ! pdns_api_ok "$other"; then
      die "127.0.0.1:8081 is taken and does not accept our PowerDNS API key"
    fi
    set_secret PDNS_API_KEY "$other"
    say "powerdns: running (started elsewhere; adopted its API key)"
  else
    start_pdns "$key"
  fi
  ensure_pdns_zone "$(secret PDNS_API_KEY 32)" "$1."
}

start_pdns() {
  mkdir -p "$PDNS_DIR"
  if [[ ! -s $PDNS_DIR/pdns.sqlite3 ]]; then
    rm -f "$PDNS_DIR/pdns.sqlite3.new"
    sqlite3 "$PDNS_DIR/pdns.sqlite3.new" </usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql
    mv "$PDNS_DIR/pdns.sqlite3.new" "$PDNS_DIR/pdns.sqlite3"
  fi
  # security-poll-suffix= turns off the version check PowerDNS would otherwise make over DNS.
  (umask 077 && cat >"$PDNS_DIR/pdns.conf" <<CONF
launch=gsqlite3
gsqlite3-database=$PDNS_DIR/pdns.sqlite3
local-address=127.0.0.1
local-port=5300
api=yes
api-key=$1
webserver=yes
webserver-address=127.0.0.1
webserver-port=8081
webserver-allow-from=127.0.0.1
daemon=no
guardian=no
socket-dir=$PDNS_DIR
security-poll-suffix=
CONF
  )
  say "powerdns: starting (dns 127.0.0.1:5300, api 127.0.0.1:8081)"
  start_bg pdns pdns_server --config-dir="$PDNS_DIR"
  wait_until 30 pdns_api_ok "$1" || {
    show_log "$LOGS/pdns.log"
    die "PowerDNS API did not answer within 30s"
  }
}

# ensure_pdns_zone KEY ZONE: creates the native zone (SOA + NS) when the server lacks it.
ensure_pdns_zone() {
  local code
  code=$(curl -sS --noproxy '*' --max-time 5 -o /dev/null -w '%{http_code}' -H "X-API-Key: $1" "$PDNS_API/zones/$2")
  case $code in
    200) say "dns zone $2: present" ;;
    404)
      code=$(curl -sS --noproxy '*' --max-time 5 -o "$LOGS/pdns-zone.log" -w '%{http_code}' -X POST \
        -H "X-API-Key: $1" -H 'Content-Type: application/json' "$PDNS_API/zones" --data-binary @- <<JSON
{"name":"$2","kind":"Native","nameservers":[],"rrsets":[
 {"name":"$2","type":"SOA","ttl":3600,"records":[{"content":"ns1.$2 hostmaster.$2 1 10800 3600 604800 60","disabled":false}]},
 {"name":"$2","type":"NS","ttl":3600,"records":[{"content":"ns1.$2","disabled":false}]}]}
JSON
      )
      [[ $code == 201 ]] || {
        show_log "$LOGS/pdns-zone.log"
        die "creating zone $2 failed (HTTP $code)"
      }
      say "dns zone $2: created"
      ;;
    *) die "PowerDNS answered HTTP $code for zone $2" ;;
  esac
}
