/**
 * One line of the results table: a figure of the system, the baseline it is compared with
 * (measured in the same run), their ratio, and the target when the design sets one.
 */
export interface Row {
  section: string;
  name: string;
  baseline: { label: string; value: number; unit: string } | null;
  figure: { value: number; unit: string };
  /** figure / baseline unless the row says otherwise (e.g. an overhead's share). */
  ratio: number | null;
  target?: { text: string; met: boolean };
  note?: string;
}

export function row(input: Omit<Row, 'ratio'> & { ratio?: number | null }): Row {
  const ratio =
    input.ratio !== undefined
      ? input.ratio
      : input.baseline && input.baseline.value !== 0
        ? input.figure.value / input.baseline.value
        : null;
  return { ...input, ratio };
}

export function fmt(value: number, unit: string): string {
  if (!Number.isFinite(value)) return 'n/a';
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  const number = value.toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
  return unit ? `${number} ${unit}` : number;
}

export function printRow(r: Row): void {
  const baseline = r.baseline ? `${r.baseline.label} ${fmt(r.baseline.value, r.baseline.unit)}` : '—';
  const verdict = r.target ? (r.target.met ? 'met' : 'MISSED') : '';
  console.log(
    `  ${r.name}: ${fmt(r.figure.value, r.figure.unit)} | baseline ${baseline} | ratio ${r.ratio === null ? '—' : r.ratio.toFixed(2)}` +
      (r.target ? ` | target ${r.target.text}: ${verdict}` : '') +
      (r.note ? ` (${r.note})` : ''),
  );
}

/** The final table: fixed-width columns, one section after another. */
export function printTable(rows: Row[]): void {
  const header = ['benchmark', 'baseline', 'figure', 'ratio', 'target', 'result'];
  const cells = rows.map((r) => [
    `${r.section} · ${r.name}`,
    r.baseline ? `${r.baseline.label} ${fmt(r.baseline.value, r.baseline.unit)}` : '—',
    fmt(r.figure.value, r.figure.unit),
    r.ratio === null ? '—' : r.ratio.toFixed(2),
    r.target?.text ?? '—',
    r.target ? (r.target.met ? 'met' : 'MISSED') : 'info',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: string[]) =>
    values.map((v, i) => (i === 3 ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
  const targets = rows.filter((r) => r.target);
  const missed = targets.filter((r) => !r.target!.met);
  console.log(
    `\n${targets.length - missed.length} of ${targets.length} targets met${missed.length ? `; missed: ${missed.map((r) => `${r.section} · ${r.name}`).join(', ')}` : ''}`,
  );
}
