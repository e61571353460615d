import { describe, expect, it } from 'vitest';
import { createStreamMasker } from './stream-masker.js';

const SECRET = 'hunter2-very-secret';

/** Feeds the chunks one by one and returns what would have been shipped after each. */
function ship(values: string[], chunks: string[]): string[] {
  const masker = createStreamMasker(values);
  const shipped = chunks.map((chunk) => masker.push(chunk));
  shipped.push(masker.end());
  return shipped;
}

describe('masking output that arrives in chunks', () => {
  it('masks a secret split across two chunks, at every split point', () => {
    const text = `a ${SECRET} b\n`;
    for (let at = 1; at < text.length; at += 1) {
      const shipped = ship([SECRET], [text.slice(0, at), text.slice(at)]);
      expect(shipped.join(''), `split at ${at}`).toBe('a *** b\n');
      for (const piece of shipped) expect(piece).not.toContain('hunter2');
    }
  });

  it('masks a secret split across many one-character chunks', () => {
    expect(ship([SECRET], [...`x${SECRET}y`]).join('')).toBe('x***y');
  });

  it('ships output that cannot start a secret at once, a line without its newline included', () => {
    expect(ship([SECRET], ['first\n', 'Password: '])).toEqual(['first\n', 'Password: ', '']);
  });

  it('holds back only what may start a secret, and ships it as it was when it does not', () => {
    expect(ship([SECRET], ['ok hunt', 'ing\n'])).toEqual(['ok ', 'hunting\n', '']);
    // Output that ended mid-secret-prefix is not a secret: it is shipped at the end as printed.
    expect(ship([SECRET], ['ok hunter2'])).toEqual(['ok ', 'hunter2']);
  });

  it('masks overlapping secrets as the stored output does (longest first), whatever the split', () => {
    const values = ['abcd-long-secret', 'long-secret-tail', 'cd-lo'];
    const text = 'x abcd-long-secret-tail y';
    const whole = ship(values, [text]).join('');
    for (let at = 1; at < text.length; at += 1)
      expect(ship(values, [text.slice(0, at), text.slice(at)]).join(''), `split at ${at}`).toBe(whole);
  });

  it('leaves values shorter than four characters alone, as the application log does', () => {
    expect(ship(['abc'], ['xabc', 'y']).join('')).toBe('xabcy');
  });
});
