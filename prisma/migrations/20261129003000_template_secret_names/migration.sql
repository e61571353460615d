-- Data only (issue 30, docs/secrets.md#secret-variables): template services created before a
-- template's passwords and keys were secret variables hold them as plain ones. Marks a template's
-- declared secret names (`secret: true` or `generate` in templates/<id>.yaml when this was written)
-- in `services.secret_names`, and in the release records of those services
-- (`deployments.source_secret_names`), so that a rollback to an older release does not bring the
-- password back as a plain variable.
--
-- Safe by construction: `secret_names` holds names and the time they were marked, never a value,
-- so this needs no key and neither reads nor writes `variables` or `source_variables` (sealed).
-- Idempotent: only names not yet marked are added; a name already secret keeps its time. A mark
-- on a name the service has no value for means nothing (liveSecretNames ignores it).

CREATE TEMP TABLE template_secret_names (template_id text NOT NULL, name text NOT NULL) ON COMMIT DROP;
INSERT INTO template_secret_names (template_id, name) VALUES
  ('postgres', 'POSTGRES_PASSWORD'),
  ('mariadb', 'MARIADB_PASSWORD'),
  ('mariadb', 'MARIADB_ROOT_PASSWORD'),
  ('redis', 'REDIS_PASSWORD'),
  ('wordpress', 'DB_PASSWORD'),
  ('wordpress', 'DB_ROOT_PASSWORD'),
  ('n8n', 'N8N_ENCRYPTION_KEY');

UPDATE services AS s
SET secret_names = s.secret_names || marks.names
FROM (
  SELECT sv.id,
         jsonb_object_agg(t.name, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS names
  FROM services AS sv
  JOIN template_secret_names AS t ON t.template_id = sv.template_id
  WHERE sv.deploy_method = 'template' AND NOT (sv.secret_names ? t.name)
  GROUP BY sv.id
) AS marks
WHERE s.id = marks.id;

UPDATE deployments AS d
SET source_secret_names = COALESCE(d.source_secret_names, '{}'::jsonb) || marks.names
FROM (
  SELECT dp.id,
         jsonb_object_agg(t.name, to_char(dp.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS names
  FROM deployments AS dp
  JOIN services AS sv ON sv.id = dp.service_id
  JOIN template_secret_names AS t ON t.template_id = sv.template_id
  WHERE sv.deploy_method = 'template'
    AND dp.source_variables IS NOT NULL
    AND NOT (COALESCE(dp.source_secret_names, '{}'::jsonb) ? t.name)
  GROUP BY dp.id
) AS marks
WHERE d.id = marks.id;
