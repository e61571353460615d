/** One round of `compare`: the two are measured for four of them, after a warm-up. */
const ROUND_MS = 1500;

/**
 * Mean milliseconds of one call of each, the two interleaved call by call for ROUND_MS × 4 (after a
 * warm-up), so a change of the machine's load meanwhile weighs on both alike.
 */
export async function compare(figure: () => Promise<unknown>, baseline: () => Promise<unknown>) {
  for (let i = 0; i < 5; i += 1) {
    await figure();
    await baseline();
  }
  const spent = { figure: 0, baseline: 0 };
  let calls = 0;
  const started = performance.now();
  while (performance.now() - started < ROUND_MS * 4) {
    const a = performance.now();
    await baseline();
    const b = performance.now();
    await figure();
    spent.baseline += b - a;
    spent.figure += performance.now() - b;
    calls += 1;
  }
  return { figure: spent.figure / calls, baseline: spent.baseline / calls };
}
