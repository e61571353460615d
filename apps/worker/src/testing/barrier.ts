/** Resolves for everyone once `parties` have arrived: replicas under test then act at the same moment. */
export function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return async () => {
    if (++arrived === parties) release();
    await all;
  };
}
