# shellcheck shell=bash
# Caddy: HTTP on 127.0.0.1:80, admin API on 127.0.0.1:2019. The worker adds one route per service
# at runtime (PUT .../routes/0), ahead of the catch-all that answers unknown hosts with 404.

CADDY_DIR="$DATA/caddy"
CADDY_ADMIN=http://127.0.0.1:2019

ensure_caddy() {
  if http_ok "$CADDY_ADMIN/config/"; then
    say "caddy: running (live config kept)"
    return
  fi
  port_busy 80 && die "127.0.0.1:80 is taken by something that is not our Caddy"
  mkdir -p "$CADDY_DIR/config" "$CADDY_DIR/data"
  cat >"$CADDY_DIR/caddy.json" <<'JSON'
{
  "admin": { "listen": "127.0.0.1:2019", "config": { "persist": false } },
  "apps": {
    "http": {
      "servers": {
        "hostctl": {
          "listen": ["127.0.0.1:80"],
          "automatic_https": { "disable": true },
          "routes": [
            {
              "@id": "hostctl-catch-all",
              "handle": [
                {
                  "handler": "static_response",
                  "status_code": 404,
                  "headers": { "Content-Type": ["text/plain; charset=utf-8"] },
                  "body": "no such service"
                }
              ],
              "terminal": true
            }
          ]
        }
      }
    }
  }
}
JSON
  say "caddy: starting (http 127.0.0.1:80, admin 127.0.0.1:2019)"
  start_bg caddy env XDG_CONFIG_HOME="$CADDY_DIR/config" XDG_DATA_HOME="$CADDY_DIR/data" \
    caddy run --config "$CADDY_DIR/caddy.json"
  wait_until 30 http_ok "$CADDY_ADMIN/config/" || {
    show_log "$LOGS/caddy.log"
    die "Caddy admin API did not answer within 30s"
  }
}
