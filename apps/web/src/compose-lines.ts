/**
 * The 1-based line of a compose document that a policy error's path (`services.web.privileged`,
 * `services.web.ports.0`) points at, found by following the keys down the YAML indentation. Null
 * when the path cannot be followed (flow style, anchors): the error is then shown without a line.
 */
export function lineOfPath(text: string, path: string): number | null {
  const lines = text.split('\n');
  const keys = path
    .replace(/^\/body\/compose\/?/, '')
    .split(/[./]/)
    .filter(Boolean);
  let from = 0;
  let parentIndent = -1;
  let found: number | null = null;
  for (const key of keys) {
    const index = /^\d+$/.test(key) ? Number(key) : null;
    let seen = 0;
    let hit: number | null = null;
    for (let i = from; i < lines.length; i++) {
      const line = lines[i]!;
      if (!line.trim() || line.trimStart().startsWith('#')) continue;
      const indent = line.length - line.trimStart().length;
      if (indent <= parentIndent) break;
      const body = line.trimStart();
      if (index !== null) {
        if (body.startsWith('- ') || body === '-') {
          if (seen === index) {
            hit = i;
            break;
          }
          seen++;
        }
      } else if (body.startsWith(`${key}:`) || body.startsWith(`"${key}":`) || body.startsWith(`'${key}':`)) {
        hit = i;
        break;
      }
    }
    if (hit === null) return found === null ? null : found + 1;
    found = hit;
    parentIndent = lines[hit]!.length - lines[hit]!.trimStart().length;
    from = hit + 1;
  }
  return found === null ? null : found + 1;
}
