import type pg from 'pg';
import type { Proc } from '../lib/proc.js';
import type { Row } from '../lib/report.js';

/** What the suites share: the bench database, the running API and an admin credential. */
export interface BenchContext {
  pool: pg.Pool;
  api: Proc;
  apiUrl: string;
  userId: string;
  /** `Bearer hsk_…` of an admin API key. */
  authorization: string;
  customerIds: string[];
  rows: Row[];
  /** Lines for the end of the report (skipped parts, capacity limits, …). */
  notes: string[];
}

export function log(message: string): void {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${message}`);
}
