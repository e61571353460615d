/**
 * One database read shared by the gauges of one scrape: prom-client calls collect() once per
 * gauge, so the first gauge fetches and the others reuse its answer, kept for a second (which
 * covers one scrape). A failed read (database away) answers null: the gauges then keep their last
 * values instead of failing the scrape.
 */
export function sharedScrapeRead<T>(read: () => Promise<T>): () => Promise<T | null> {
  let pending: Promise<T | null> | undefined;
  return () => {
    pending ??= read()
      .catch(() => null)
      // unref: the timer never holds the process open.
      .finally(() => setTimeout(() => (pending = undefined), 1000).unref());
    return pending;
  };
}
