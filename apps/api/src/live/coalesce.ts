/**
 * Groups items produced in a burst into one array: sent when `maxItems` are waiting or `maxDelayMs`
 * after the first one arrived, whichever comes first. A log follower replaying 10,000 lines of
 * history then costs the browser 20 WebSocket messages instead of 10,000 (each message is an event
 * dispatch and a JSON.parse on the page's main thread). `flush` sends what waits now.
 */
export function coalesce<T>(
  send: (batch: T[]) => void,
  { maxItems = 500, maxDelayMs = 20 }: { maxItems?: number; maxDelayMs?: number } = {},
): { push(item: T): void; flush(): void } {
  let waiting: T[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (waiting.length === 0) return;
    const batch = waiting;
    waiting = [];
    send(batch);
  };
  return {
    push(item) {
      waiting.push(item);
      if (waiting.length >= maxItems) flush();
      else timer ??= setTimeout(flush, maxDelayMs);
    },
    flush,
  };
}
