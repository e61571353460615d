import { gzipSync } from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Redis } from 'ioredis';
import { serviceLogStreamKey } from '@hostctl/queue';
import { launchChromium } from '@hostctl/testing';
import { BENCH } from '../lib/config.js';
import { createSessionCookie, growServices } from '../lib/data.js';
import { printRow, row, type Row } from '../lib/report.js';
import { log, type BenchContext } from './context.js';

const SERVICES = 10_000;
const LOG_LINES = 10_000;
const RUNS = 5;
const JS_BUDGET_KB = 200;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * 6. The dashboard in Debian's Chromium (the same browser as tests/web), served by the bench's API
 * from apps/web/dist (built by run.ts before the API starts): first-load JavaScript, the services
 * page with 10,000 services, and the main thread while 10,000 log lines arrive.
 */
export async function webSuite(ctx: BenchContext): Promise<void> {
  // growServices soft-deletes ~3 % of the rows it adds: grow until ~10,000 are visible.
  await growServices(ctx.pool, Math.ceil(SERVICES / 0.97));
  const { rows } = await ctx.pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM services WHERE deleted_at IS NULL',
  );
  const visible = Number(rows[0]!.n);
  const browser = await launchChromium();
  try {
    const context = await signedInContext(browser, ctx);
    const add = (r: Row) => {
      ctx.rows.push(r);
      printRow(r);
    };
    add(await firstLoadJs(context, ctx.apiUrl));
    add(await servicesPage(context, ctx.apiUrl, visible));
    for (const r of await logFlood(context, ctx)) add(r);
    await context.close();
  } finally {
    await browser.close();
  }
}

async function signedInContext(browser: Browser, ctx: BenchContext): Promise<BrowserContext> {
  const cookie = await createSessionCookie(ctx.userId);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addCookies([
    // Kept URL-encoded, as Set-Cookie sends it: the raw value holds a ';'.
    { name: 'session', value: cookie.slice('session='.length), url: ctx.apiUrl },
  ]);
  return context;
}

/** Every script the first visit loads (entry and preloaded chunks), gzipped at level 9. */
async function firstLoadJs(context: BrowserContext, apiUrl: string): Promise<Row> {
  log('web: first-load JavaScript');
  const page = await context.newPage();
  const scripts = new Map<string, Promise<Buffer>>();
  page.on('response', (response) => {
    if (response.request().resourceType() === 'script') scripts.set(response.url(), response.body());
  });
  await page.goto(`${apiUrl}/services`, { waitUntil: 'networkidle' });
  await page.close();
  const bodies = await Promise.all(scripts.values());
  const raw = bodies.reduce((sum, body) => sum + body.length, 0);
  const gzip = bodies.reduce((sum, body) => sum + gzipSync(body, { level: 9 }).length, 0);
  const kb = gzip / 1024;
  return row({
    section: 'web',
    name: 'first-load JavaScript (gzip)',
    baseline: { label: 'budget', value: JS_BUDGET_KB, unit: 'KB' },
    figure: { value: kb, unit: 'KB' },
    target: { text: `≤ ${JS_BUDGET_KB} KB`, met: kb <= JS_BUDGET_KB },
    note: `${scripts.size} script(s), ${(raw / 1024).toFixed(0)} KB before compression; ratio = share of the budget`,
  });
}

/** The few DOM calls the page functions make (this program has Node's types, not the DOM's). */
interface PageDocument {
  querySelector(selector: string): { textContent: string | null } | null;
  querySelectorAll(selector: string): ArrayLike<{ pathname: string }>;
}

// A function, not a string: the dashboard's CSP forbids the eval a string predicate needs.
function servicesUsable(): boolean {
  const doc = (globalThis as unknown as { document: PageDocument }).document;
  return (
    doc.querySelector('h1')?.textContent?.trim() === 'Services' &&
    Array.from(doc.querySelectorAll('main a[href^="/services/"]')).some(
      (a) => !a.pathname.endsWith('/new'),
    ) &&
    doc.querySelector('[aria-busy="true"]') === null
  );
}

/**
 * From navigation start until the services page is usable: its h1, at least one service link in
 * main, nothing aria-busy. Baseline: the same browser loading the list's API response itself.
 */
async function servicesPage(context: BrowserContext, apiUrl: string, visible: number): Promise<Row> {
  log(`web: services page with ${visible.toLocaleString('en-US')} services`);
  const page = await context.newPage();
  const usable: number[] = [];
  const raw: number[] = [];
  // One cold visit first (fills the HTTP cache the way a returning user has it), not counted.
  for (let i = 0; i <= RUNS; i++) {
    await page.goto(`${apiUrl}/services`, { waitUntil: 'commit' });
    await page.waitForFunction(servicesUsable, null, { polling: 'raf', timeout: 30_000 });
    const ms = await page.evaluate<number>('performance.now()');
    if (i > 0) usable.push(ms);
    await page.goto(`${apiUrl}/api/services`, { waitUntil: 'load' });
    const responseEnd = await page.evaluate<number>(
      "performance.getEntriesByType('navigation')[0].responseEnd",
    );
    if (i > 0) raw.push(responseEnd);
  }
  await page.close();
  const figure = median(usable);
  return row({
    section: 'web',
    name: `services page usable, ${visible.toLocaleString('en-US')} services`,
    baseline: { label: 'raw GET /api/services', value: median(raw), unit: 'ms' },
    figure: { value: figure, unit: 'ms' },
    target: { text: '< 1 s', met: figure < 1000 },
    note: `median of ${RUNS} warm visits, navigation start to h1 + rows + nothing aria-busy`,
  });
}

/** Records every long task (≥ 50 ms, the Long Tasks API's threshold) from the page's first script. */
const OBSERVE_LONG_TASKS = `window.__longTasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
  .observe({ type: 'longtask', buffered: true });`;

/**
 * 10,000 lines written to a service's log stream (what the worker's shipper does) as fast as Redis
 * takes them, while the logs tab follows. Figure: the longest task on the main thread from the
 * first line until the last is on screen. Baseline: a page of the same origin that only counts the
 * same lines arriving on the same WebSocket.
 */
async function logFlood(context: BrowserContext, ctx: BenchContext): Promise<Row[]> {
  log(`web: ${LOG_LINES.toLocaleString('en-US')} log lines into the logs tab`);
  await context.addInitScript(OBSERVE_LONG_TASKS);
  const { rows } = await ctx.pool.query<{ id: string }>(
    `SELECT id FROM services WHERE deleted_at IS NULL AND status = 'running' ORDER BY name LIMIT 2`,
  );
  const [viewed, counted] = rows.map((r) => r.id) as [string, string];
  const redis = new Redis(BENCH.redisUrl);
  try {
    // Baseline: a raw WebSocket counting lines, on a page of the same origin (cookie sent).
    const blank = await context.newPage();
    await blank.goto(`${ctx.apiUrl}/livez`);
    await blank.evaluate(`new Promise((resolve) => {
      window.__count = 0;
      const socket = new WebSocket(location.origin.replace('http', 'ws') + '/api/services/${counted}/logs?follow=true&tail=0');
      socket.onmessage = () => void window.__count++;
      socket.onopen = () => setTimeout(resolve, 300);
    })`);
    await blank.evaluate('window.__longTasks.length = 0');
    const baselineStart = Date.now();
    await flood(redis, counted, 'baseline');
    await blank.waitForFunction(
      (n) => (globalThis as unknown as { __count: number }).__count >= n,
      LOG_LINES,
      { timeout: 60_000 },
    );
    const baselineMs = Date.now() - baselineStart;
    const baselineLongest = await longestTask(blank);
    await blank.close();

    const page = await context.newPage();
    const socket = page.waitForEvent('websocket', { predicate: (ws) => ws.url().includes('/logs') });
    await page.goto(`${ctx.apiUrl}/services/${viewed}/logs`);
    await socket;
    await page.waitForTimeout(500);
    await page.evaluate('window.__longTasks.length = 0');
    const started = Date.now();
    await flood(redis, viewed, 'flood');
    await page.getByText(`flood line ${String(LOG_LINES - 1).padStart(5, '0')}`).waitFor({ timeout: 60_000 });
    const shownMs = Date.now() - started;
    const longest = await longestTask(page);
    await page.close();
    return [
      row({
        section: 'web',
        name: `longest main-thread task, ${LOG_LINES.toLocaleString('en-US')} log lines arriving`,
        baseline: { label: 'raw WebSocket page', value: baselineLongest, unit: 'ms' },
        figure: { value: longest, unit: 'ms' },
        ratio: baselineLongest > 0 ? longest / baselineLongest : null,
        target: { text: '< 50 ms', met: longest < 50 },
        note: '0 = no task of 50 ms or more (the Long Tasks API reports none shorter)',
      }),
      row({
        section: 'web',
        name: `${LOG_LINES.toLocaleString('en-US')} log lines until the last is on screen`,
        baseline: { label: 'raw WebSocket page', value: baselineMs, unit: 'ms' },
        figure: { value: shownMs, unit: 'ms' },
      }),
    ];
  } finally {
    redis.disconnect();
  }
}

async function flood(redis: Redis, serviceId: string, label: string): Promise<void> {
  const key = serviceLogStreamKey(BENCH.queuePrefix, serviceId);
  for (let from = 0; from < LOG_LINES; from += 500) {
    const batch = redis.pipeline();
    for (let i = from; i < Math.min(LOG_LINES, from + 500); i++) {
      const message = `${label} line ${String(i).padStart(5, '0')} GET /api/orders/${i} 200 ${i % 97} ms`;
      batch.xadd(
        key,
        'MAXLEN',
        '~',
        '20000',
        '*',
        'ts',
        new Date().toISOString(),
        'stream',
        'stdout',
        'message',
        message,
      );
    }
    await batch.exec();
  }
}

async function longestTask(page: Page): Promise<number> {
  return page.evaluate<number>('Math.max(0, ...window.__longTasks)');
}
