# shellcheck shell=bash
# PostgreSQL and Redis: installed and normally running on this machine kind; started if not.

ensure_postgres() {
  if pg_isready -q -h 127.0.0.1 -p 5432; then
    say "postgres: running"
    return
  fi
  command -v pg_ctlcluster >/dev/null || die "postgres is not running and pg_ctlcluster is missing"
  say "postgres: starting"
  local version
  version=$(find /etc/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1)
  quietly postgres-start pg_ctlcluster --skip-systemctl-redirect "$version" main start
  wait_until 30 pg_isready -q -h 127.0.0.1 -p 5432 || die "postgres did not come up on 127.0.0.1:5432"
}

redis_up() { [[ $(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null) == PONG ]]; }

ensure_redis() {
  if redis_up; then
    say "redis: running"
    return
  fi
  say "redis: starting"
  quietly redis-start redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" \
    --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_until 30 redis_up || die "redis did not come up on 127.0.0.1:6379"
}
