export const USAGE = `usage: hostctl COMMAND [options] [--json]

API client (HOSTCTL_URL and HOSTCTL_TOKEN, or \`hostctl login\`; https:// unless loopback or --insecure):
  hostctl login --url URL [--token-stdin]        check a token and store it (0600)
  hostctl logout                                 forget the stored token
  hostctl services list [--search S] [--status S] [--customer ID] [--sort F] [--order asc|desc]
                        [--page N] [--per-page N]
  hostctl services get|start|stop|restart SERVICE
  hostctl services delete SERVICE --yes
  hostctl services create --name NAME [--customer ID] --compose-file FILE|-
                        | --method template --template ID [--var K=V]... [--secret K=V]...
                        | --method git --git-url URL [--git-branch B] | --method ai --ai-url URL
                        [--wait [--timeout S]] [--idempotency-key K]
  hostctl services set SERVICE [--var K=V]... [--secret K=V]... [--secret-stdin K] [--wait [--timeout S]]
  hostctl services unset SERVICE NAME... [--wait [--timeout S]]   plain or secret; redeploys like set
  hostctl services reveal SERVICE NAME              one secret value (audited)
  hostctl groups list [--customer ID] [--page N] [--per-page N]      variable groups (docs/secrets.md)
  hostctl groups get|redeploy GROUP                 redeploy: every service the group is attached to
  hostctl groups create --name NAME [--customer ID] [--var K=V]... [--secret K=V]... [--secret-stdin K]
  hostctl groups set GROUP [--var K=V]... [--secret K=V]... [--secret-stdin K] [--if-version N]
  hostctl groups unset GROUP NAME... [--if-version N]
  hostctl groups reveal GROUP NAME                  one secret value (audited)
  hostctl groups attach GROUP SERVICE [--position N] [--if-version N] | groups detach GROUP SERVICE [--if-version N]
  hostctl groups delete GROUP --yes
  hostctl deploy SERVICE [--wait [--timeout S]] [--idempotency-key K]   redeploy (latest image or commit)
  hostctl rollback SERVICE [--to DEPLOYMENT] [--wait [--timeout S]] [--idempotency-key K]
  hostctl cancel DEPLOYMENT
  hostctl deployments SERVICE [--page N] [--per-page N]
  hostctl logs SERVICE [--tail N] [--since RFC3339] [--follow] [--timestamps]
  hostctl events SERVICE
  hostctl run SERVICE [--component C] [--timeout S] -- CMD ARGS…
                                                 run once in the current release; exits with its code
  hostctl exec SERVICE [--component C] [-- CMD ARGS…]
                                                 terminal in a running container (default /bin/sh);
                                                 exits with its code; needs a key with the exec action
  hostctl runs get RUN [--wait]                  status, exit code, duration and output of a run
  hostctl runs list SERVICE [--page N] [--per-page N]   every run of the service, newest first
  hostctl schedules list SERVICE | schedules get SERVICE SCHEDULE      scheduled jobs (docs/jobs.md)
  hostctl schedules create SERVICE --name N --cron EXPR [--time-zone TZ] [--component C] [--timeout S]
                        [--retries N] [--overlap forbid|replace|allow] [--catch-up one|none]
                        [--enabled true|false]
                        [--idempotency-key K] -- CMD ARGS…
  hostctl schedules update SERVICE SCHEDULE [--name N] [--cron EXPR] [...as create]
                        [-- CMD ARGS…]
  hostctl schedules delete SERVICE SCHEDULE --yes
  hostctl schedules run SERVICE SCHEDULE [--wait]   run now; --wait: exits with the command's code
  hostctl schedules runs SERVICE [SCHEDULE] [--page N] [--per-page N]   without SCHEDULE: every run
  hostctl backups create SERVICE [--wait [--timeout S]]   back up every named volume (docs/backups.md)
  hostctl backups list SERVICE [--page N] [--per-page N]
  hostctl backups get BACKUP
  hostctl backups verify BACKUP [--wait [--timeout S]]   restore test of the backup (check, restore, verify commands)
  hostctl backups schedule SERVICE [--cron EXPR [--time-zone TZ] [--enabled true|false]
          [--keep-last N] [--keep-daily N] [--keep-weekly N] [--keep-monthly N]
          [--verify-cron EXPR]]   show or set (--verify-cron: scheduled restore tests)
  hostctl backups unschedule SERVICE                     remove the backup schedule (backups stay)
  hostctl backups target show|unset CUSTOMER             the customer's own bucket (customer id)
  hostctl backups target set CUSTOMER [--endpoint URL] [--bucket B] [--prefix P] [--region R]
          [--ca-file PEM] [--access-key-id ID --secret-key-stdin] [--reset prefix,region,ca-file]
          changes only the fields given (the others and the stored key pair stay; a new endpoint,
          bucket or key id needs the secret on stdin); creates the target when there is none
          (--endpoint, --bucket, --access-key-id and --secret-key-stdin then)
  hostctl restore BACKUP [--wait [--timeout S]]          the backup's volumes back into its service
  hostctl restore BACKUP --into-new NAME [--wait]        a new service NAME cloned from the backup
SERVICE and GROUP are an id or a name; RUN, an id; SCHEDULE, an id or a name of one of SERVICE's schedules. --wait streams the deployment log to stderr (default timeout 900 s).
Exit codes: 0 succeeded, 1 failed, 2 usage or configuration, 3 timed out waiting (the deployment
goes on), 4 cancelled/superseded/rolled back, 5 authentication or permission. See docs/ci.md.

Operator bootstrap (talks to the database: DATABASE_URL, else the repository's .data/env):
  hostctl customers create --name NAME
  hostctl users create --email E --name N --role admin|operator|viewer [--customer ID]
  hostctl api-keys create --email E --name N [--expires-at RFC3339]
                        [--service ID | --customer ID] [--actions read,deploy,operate,manage]
                                                 a deploy token when limited (docs/auth.md)

Secrets at rest (DATABASE_URL and SECRETS_KEK[_FILE], SECRETS_KEK_ID, SECRETS_KEK_RETIRED; docs/secrets.md):
  hostctl secrets rotate   re-wrap every data key under SECRETS_KEK (old key in SECRETS_KEK_RETIRED)
  hostctl secrets seal     encrypt variables stored before encryption existed
  hostctl secrets verify   check that the configured keys open every data key`;
