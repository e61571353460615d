/**
 * Reads Prometheus text from the processes' /metrics endpoints, as a scraper would. Counters of a
 * killed worker start again from zero: figures are "as scraped at the end of the run".
 */
export async function scrape(urls: string[]): Promise<string[]> {
  return Promise.all(
    urls.map(async (url) => {
      try {
        return await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      } catch {
        return '';
      }
    }),
  );
}

/** Sum over every scraped text of the samples of `name` whose labels include `labels`. */
export function sumMetric(texts: string[], name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const text of texts) {
    for (const line of text.split('\n')) {
      const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
      if (!match || match[1] !== name) continue;
      const set = match[2] ?? '';
      if (Object.entries(labels).every(([key, value]) => set.includes(`${key}="${value}"`)))
        total += Number(match[3]);
    }
  }
  return total;
}

/** Label values of `label` seen on samples of `name`. */
export function labelValues(texts: string[], name: string, label: string): Record<string, number> {
  const values: Record<string, number> = {};
  for (const text of texts) {
    for (const line of text.split('\n')) {
      if (!line.startsWith(`${name}{`)) continue;
      const value = new RegExp(`${label}="([^"]*)"`).exec(line)?.[1];
      if (value !== undefined) values[value] = (values[value] ?? 0) + Number(line.split(' ').at(-1));
    }
  }
  return values;
}
