import { parseCompose } from '@hostctl/compose';
import { HOSTILE_YAML, legitCompose } from '@hostctl/testing';
import { row, type Row } from '../lib/report.js';
import { log } from './context.js';

/**
 * What a compose costs to parse, per KB of input, against JSON.parse of a JSON document of the same
 * size measured in the same run (the cheapest parse Node has: the floor, not a target). Honest
 * documents of several sizes, then the hostile ones, which must cost no more per KB than honest
 * ones of their size: the bounds refuse them early (docs/limits.md). Pure CPU: no API, no database.
 */
const ROUNDS_MS = 1500;

/** A JSON document of about `bytes` bytes, shaped like a compose (services, environments). */
function jsonOfSize(bytes: number): string {
  const entry = (i: number) => [`VAR_${i}`, `value-${i}-${'v'.repeat(40)}`];
  const perEntry = JSON.stringify(Object.fromEntries([entry(100_000)])).length;
  const count = Math.max(1, Math.round(bytes / perEntry));
  const environment = Object.fromEntries(Array.from({ length: count }, (_, i) => entry(i)));
  return JSON.stringify({ services: { web: { image: 'local/busybox:1', environment } } });
}

/** Mean milliseconds of one call, over as many calls as fit in ROUNDS_MS (after a warm-up). */
function timeOf(fn: () => void): number {
  for (let i = 0; i < 3; i += 1) fn();
  let calls = 0;
  const started = performance.now();
  while (performance.now() - started < ROUNDS_MS) {
    fn();
    calls += 1;
  }
  return (performance.now() - started) / calls;
}

function parseOrRefuse(text: string): void {
  try {
    parseCompose(text, {});
  } catch {
    // Refusal is the expected outcome for hostile documents.
  }
}

function perKb(name: string, text: string, rows: Row[]): void {
  const kb = Buffer.byteLength(text) / 1024;
  const json = jsonOfSize(Buffer.byteLength(text));
  const composeMs = timeOf(() => parseOrRefuse(text));
  const jsonMs = timeOf(() => void JSON.parse(json));
  const figure = (composeMs * 1000) / kb;
  const baseline = (jsonMs * 1000) / (Buffer.byteLength(json) / 1024);
  log(`parse ${name}: ${kb.toFixed(0)} KB, ${composeMs.toFixed(2)} ms (${figure.toFixed(1)} µs/KB)`);
  rows.push(
    row({
      section: 'parse',
      name: `${name} (${kb.toFixed(0)} KB)`,
      baseline: { label: 'JSON.parse', value: baseline, unit: 'µs/KB' },
      figure: { value: figure, unit: 'µs/KB' },
      note: `${composeMs.toFixed(2)} ms per document`,
    }),
  );
}

export function parseSuite(ctx: { rows: Row[]; notes: string[] }): Promise<void> {
  log('parse: honest composes of several sizes, then the hostile documents');
  perKb('compose 1 service', legitCompose(1, 5), ctx.rows);
  perKb('compose 5 services', legitCompose(5, 30), ctx.rows);
  perKb('compose 20 services', legitCompose(20, 40), ctx.rows);
  perKb('compose 20 services, near 256 KiB', legitCompose(20, 150, 60), ctx.rows);
  for (const [name, build] of Object.entries(HOSTILE_YAML)) perKb(`refused: ${name}`, build(), ctx.rows);
  ctx.notes.push(
    'parse: figures are µs per KB of input, compared with JSON.parse of a JSON document of the same size; refused rows stop at the first bound passed',
  );
  return Promise.resolve();
}
