import { BENCH } from '../lib/config.js';
import { createSessionCookie } from '../lib/data.js';
import { measure, median, medianResult, type LoadResult } from '../lib/load.js';
import { peakRss, rssMiB } from '../lib/proc.js';
import { printRow, row, type Row } from '../lib/report.js';
import { startBaseline } from '../lib/stack.js';
import { log, type BenchContext } from './context.js';

type Target = 'hello' | 'pg' | 'list' | 'detail' | 'session';

/**
 * 1. Authenticated reads against two baselines started here: a bare Fastify hello-world (the
 * ceiling of the HTTP stack) and Fastify + one pg SELECT of 20 rows from the same table (the
 * ceiling of "a route that reads the database"). Target (DESIGN.md): the list ≥ 50 % of the pg
 * baseline's requests/s and p99 < 20 ms at 50 connections.
 *
 * Each connection count runs BENCH.rounds rounds of (hello, pg, list, detail, session), so drift
 * from other work on the machine hits baseline and API alike; the figures are medians over the
 * rounds and each ratio is the median of the per-round ratios.
 */
export async function apiSuite(ctx: BenchContext): Promise<void> {
  const hello = await startBaseline('hello');
  const pgBase = await startBaseline('pg');
  try {
    const list = `${ctx.apiUrl}/api/services`;
    const { rows } = await ctx.pool.query<{ id: string }>(
      'SELECT id FROM services WHERE deleted_at IS NULL ORDER BY created_at DESC LIMIT 1',
    );
    const detail = `${ctx.apiUrl}/api/services/${rows[0]!.id}`;
    const keyHeaders = { authorization: ctx.authorization };
    await expectItems(list, keyHeaders, 20);

    let cookieHeaders: Record<string, string> | null = { cookie: await createSessionCookie(ctx.userId) };
    const probe = await fetch(list, { headers: cookieHeaders });
    if (probe.status !== 200) {
      ctx.notes.push(
        `session-cookie benchmark skipped: GET /api/services with a session cookie answered ${probe.status}`,
      );
      cookieHeaders = null;
    }
    const targets: Record<Target, { url: string; pid: number; headers: Record<string, string> } | null> = {
      hello: { url: hello.url, pid: hello.proc.pid, headers: {} },
      pg: { url: pgBase.url, pid: pgBase.proc.pid, headers: {} },
      list: { url: list, pid: ctx.api.pid, headers: keyHeaders },
      detail: { url: detail, pid: ctx.api.pid, headers: keyHeaders },
      session: cookieHeaders ? { url: list, pid: ctx.api.pid, headers: cookieHeaders } : null,
    };

    const idle = ctx.rows.find((r) => r.name === 'API RSS idle')?.figure.value ?? rssMiB(ctx.api.pid);
    let peak = 0;
    const add = (r: Row) => {
      ctx.rows.push(r);
      printRow(r);
    };
    for (const connections of [10, 50]) {
      const runs: Record<Target, LoadResult[]> = { hello: [], pg: [], list: [], detail: [], session: [] };
      for (let round = 1; round <= BENCH.rounds; round++) {
        log(`api: ${connections} connections, round ${round} of ${BENCH.rounds}`);
        const sampled = await peakRss([ctx.api.pid], async () => {
          for (const [name, target] of Object.entries(targets) as [Target, (typeof targets)[Target]][]) {
            if (target)
              runs[name].push(await measure({ ...target, connections, durationS: BENCH.durationS }));
          }
        });
        peak = Math.max(peak, sampled.peaks[0]!);
      }
      const at = `@${connections}c`;
      const h = medianResult(runs.hello);
      const p = medianResult(runs.pg);
      const ratioTo = (name: Target, base: Target) =>
        median(runs[name].map((r, i) => r.rps / runs[base][i]!.rps));
      add(
        row({
          section: 'api',
          name: `hello-world baseline ${at}`,
          baseline: null,
          figure: rpsOf(h),
          note: `p99 ${h.p99Ms} ms, CPU ${cpuText(h)}`,
        }),
      );
      add(
        row({
          section: 'api',
          name: `pg SELECT baseline ${at}`,
          baseline: null,
          figure: rpsOf(p),
          note: `p99 ${p.p99Ms} ms, CPU ${cpuText(p)}`,
        }),
      );
      const routes: [Target, string][] = [
        ['list', 'GET /api/services (API key)'],
        ['detail', 'GET /api/services/:id (API key)'],
        ['session', 'GET /api/services (session cookie)'],
      ];
      for (const [name, label] of routes) {
        if (runs[name].length === 0) continue;
        const result = medianResult(runs[name]);
        const ratio = ratioTo(name, 'pg');
        add(
          row({
            section: 'api',
            name: `${label} ${at}`,
            baseline: { label: 'pg', ...rpsOf(p) },
            figure: rpsOf(result),
            ratio,
            target: { text: 'ratio ≥ 0.50', met: ratio >= 0.5 },
            note: `p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, CPU ${cpuText(result)} (pg ${cpuText(p)})`,
          }),
        );
        if (connections === 50) {
          add(
            row({
              section: 'api',
              name: `${label} p99 ${at}`,
              baseline: { label: 'pg p99', value: p.p99Ms, unit: 'ms' },
              figure: { value: result.p99Ms, unit: 'ms' },
              target: { text: '< 20 ms', met: result.p99Ms < 20 },
            }),
          );
        }
      }
      const l = medianResult(runs.list);
      add(
        row({
          section: 'api',
          name: `GET /api/services vs hello-world ${at}`,
          baseline: { label: 'hello', ...rpsOf(h) },
          figure: rpsOf(l),
          ratio: ratioTo('list', 'hello'),
        }),
      );
      add(
        row({
          section: 'api',
          name: `CPU per request, GET /api/services ${at}`,
          baseline: { label: 'pg', value: p.cpuMsPerRequest ?? Number.NaN, unit: 'ms' },
          figure: { value: l.cpuMsPerRequest ?? Number.NaN, unit: 'ms' },
        }),
      );
    }
    ctx.rows.push(
      row({
        section: 'memory',
        name: 'API RSS peak under read load',
        baseline: { label: 'idle', value: idle, unit: 'MiB' },
        figure: { value: peak, unit: 'MiB' },
      }),
    );
  } finally {
    await hello.proc.stop();
    await pgBase.proc.stop();
  }
}

const rpsOf = (result: LoadResult) => ({ value: result.rps, unit: 'req/s' });
const cpuText = (result: LoadResult) =>
  result.cpuMsPerRequest === null ? '?' : `${result.cpuMsPerRequest.toFixed(2)} ms/req`;

async function expectItems(url: string, headers: Record<string, string>, count: number): Promise<void> {
  const response = await fetch(url, { headers });
  const body = (await response.json()) as { data?: unknown[] };
  if (response.status !== 200 || body.data?.length !== count) {
    throw new Error(
      `${url} answered ${response.status} with ${body.data?.length ?? 'no'} items, expected ${count}`,
    );
  }
}
