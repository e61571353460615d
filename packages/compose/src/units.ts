/**
 * Compose's duration (`1m30s`, Go syntax) and byte-size (`256M`, 1024-based) notations, parsed to
 * integers the Docker API takes, and formatted back so renderCompose shows the same values.
 */
const DURATION_UNITS_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const DURATION = /^(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+$/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;

/** Milliseconds, or undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const match of text.matchAll(DURATION_PART)) total += Number(match[1]) * DURATION_UNITS_MS[match[2]!]!;
  return Math.round(total);
}

export function formatDuration(ms: number): string {
  if (ms > 0 && ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms > 0 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
};

/** Bytes, or undefined when the value is not a size. Plain numbers are bytes, as in compose. */
export function parseBytes(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(value.trim());
  const unit = BYTE_UNITS[match?.[2]?.toLowerCase() ?? 'invalid'];
  if (!match || unit === undefined) return undefined;
  return Math.floor(Number(match[1]) * unit);
}

export function formatBytes(bytes: number): string {
  for (const [suffix, size] of [
    ['g', 1024 ** 3],
    ['m', 1024 ** 2],
    ['k', 1024],
  ] as const) {
    if (bytes % size === 0) return `${bytes / size}${suffix}`;
  }
  return `${bytes}b`;
}
