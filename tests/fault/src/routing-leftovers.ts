import type { Db } from '@hostctl/db';
import { CADDY_ADMIN_URL, CADDY_SERVER_NAME, PDNS } from './fault-env.js';

interface CaddyRoute {
  '@id'?: string;
  handle?: { handler?: string; hostctl_instance?: string; hostctl_service?: string }[];
}

interface PdnsZone {
  rrsets?: { name: string; type: string; comments?: { content: string }[] }[];
}

const OWNER = /^hostctl-owner service=(\S+)$/;

/**
 * Caddy routes of this installation and DNS records of this suite's services whose service is not
 * live: the "no route or record without a live service" invariant. Returns descriptions.
 */
export async function findRoutingLeftovers(db: Db, instance: string): Promise<string[]> {
  const owned: { what: string; service: string }[] = [];
  if (CADDY_ADMIN_URL) {
    const response = await fetch(`${CADDY_ADMIN_URL}/config/apps/http/servers/${CADDY_SERVER_NAME}/routes`);
    const routes = (await response.json()) as CaddyRoute[] | null;
    for (const route of routes ?? []) {
      const marker = route.handle?.find((h) => h.handler === 'vars' && h.hostctl_instance === instance);
      if (marker?.hostctl_service)
        owned.push({ what: `route ${route['@id'] ?? '?'}`, service: marker.hostctl_service });
    }
  }
  if (PDNS.enabled) {
    const response = await fetch(
      `${PDNS.url}/api/v1/servers/localhost/zones/${PDNS.zone.replace(/\.?$/, '.')}`,
      {
        headers: { 'x-api-key': PDNS.key },
      },
    );
    const zone = (await response.json()) as PdnsZone;
    for (const rrset of zone.rrsets ?? []) {
      for (const comment of rrset.comments ?? []) {
        const service = OWNER.exec(comment.content)?.[1];
        if (service) owned.push({ what: `DNS ${rrset.type} ${rrset.name}`, service });
      }
    }
  }
  const ids = [...new Set(owned.map((o) => o.service))];
  // DNS records carry no installation: only this suite's services (rows in its database) count.
  const rows = await db.service.findMany({
    where: { id: { in: ids } },
    select: { id: true, deletedAt: true },
  });
  const ours = new Map(rows.map((row) => [row.id, row.deletedAt === null]));
  return owned.filter((o) => ours.has(o.service) && !ours.get(o.service)).map((o) => o.what);
}

/**
 * Best effort after a run that failed before its cleanup phase: the Caddy routes of this
 * installation, whose containers afterAll removes, would otherwise stay in the shared Caddy.
 */
export async function removeInstallationRoutes(instance: string): Promise<void> {
  if (!CADDY_ADMIN_URL) return;
  try {
    const response = await fetch(`${CADDY_ADMIN_URL}/config/apps/http/servers/${CADDY_SERVER_NAME}/routes`);
    const routes = ((await response.json()) as CaddyRoute[] | null) ?? [];
    for (const route of routes) {
      const isOurs = route.handle?.some((h) => h.handler === 'vars' && h.hostctl_instance === instance);
      if (isOurs && route['@id'])
        await fetch(`${CADDY_ADMIN_URL}/id/${encodeURIComponent(route['@id'])}`, { method: 'DELETE' });
    }
  } catch {
    // Caddy is gone: nothing to remove.
  }
}
