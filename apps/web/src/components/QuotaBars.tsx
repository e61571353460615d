import { quotaFigures, type QuotaFigure } from '../quota-figures.ts';

interface QuotaBarsProps {
  quota: {
    limits: Record<string, number | null>;
    usage: Record<string, number>;
    overrides: Record<string, unknown>;
  };
}

const FLAG_CLASS: Partial<Record<QuotaFigure['state'], string>> = { near: 'busy', at: 'bad', over: 'bad' };

/**
 * One row per quota the API reports: its label, a `<meter>` of usage against the limit (named by
 * the label, its value in words through `aria-valuetext`), the figures as text and, when usage
 * nears, reaches or passes the limit, a flag that says so in words, not only in colour.
 */
export function QuotaBars({ quota }: QuotaBarsProps) {
  const figures = quotaFigures(quota);
  const full = figures.filter((row) => row.state === 'at' || row.state === 'over');
  return (
    <>
      {full.length > 0 ? (
        <p className="quota-summary">
          <strong>
            {full.length === 1 ? '1 quota is' : `${full.length} quotas are`} at or over the limit:
          </strong>{' '}
          {full.map((row) => row.label).join(', ')}. Anything that would add to{' '}
          {full.length === 1 ? 'it' : 'them'} is refused; what runs keeps running.
        </p>
      ) : null}
      <ul className="plain quota-list">
        {figures.map((row) => (
          <QuotaRow key={row.name} row={row} overridden={row.name in quota.overrides} />
        ))}
      </ul>
    </>
  );
}

function QuotaRow({ row, overridden }: { row: QuotaFigure; overridden: boolean }) {
  const labelId = `quota-${row.name}`;
  const valueText = row.flag ? `${row.text}, ${row.flag}` : row.text;
  return (
    <li className="quota-row" data-quota={row.name}>
      <span>
        <span id={labelId}>{row.label}</span>
        {overridden ? <span className="muted"> (set for this customer)</span> : null}
      </span>
      {row.bar ? (
        <meter
          aria-labelledby={labelId}
          aria-valuetext={valueText}
          min={0}
          max={row.bar.max}
          value={row.bar.value}
          low={row.bar.low}
          high={row.bar.high}
          optimum={0}
        />
      ) : (
        <span className="muted quota-unlimited">Unlimited</span>
      )}
      <span className="quota-text">
        {row.text}
        {row.flag ? (
          <>
            {' '}
            <span className={`badge ${FLAG_CLASS[row.state] ?? 'idle'}`}>{row.flag}</span>
          </>
        ) : null}
      </span>
    </li>
  );
}
