import { secretMasker } from '../logs/secret-values.js';

/** Values shorter than this are not masked (createRedactor's bound, docs/secrets.md). */
const MIN_SECRET_LENGTH = 4;

interface StreamMasker {
  /** The masked text that is safe to ship now; a possible start of a secret waits for more. */
  push(text: string): string;
  /** The rest, masked: the output ended, so what waited cannot become a secret any more. */
  end(): string;
}

/**
 * Masks secret values in output that arrives in chunks (a run's streamed output), including a
 * value split across two chunks: `pri` now and `vate-token` a second later. Only the end of the
 * text that is a proper prefix of some secret is held back (so output that cannot be a secret is
 * shipped at once, a prompt without a newline included), and the cut never falls inside a secret
 * that is already whole. What is shipped is the same redactor's result as masking the whole text.
 */
export function createStreamMasker(values: readonly string[]): StreamMasker {
  const secrets = [...new Set(values)].filter((value) => value.length >= MIN_SECRET_LENGTH);
  const redact = secretMasker(secrets);
  let pending = '';
  return {
    push(text) {
      pending += text;
      const cut = safeCut(pending, secrets);
      const ready = pending.slice(0, cut);
      pending = pending.slice(cut);
      return redact(ready);
    },
    end() {
      const rest = redact(pending);
      pending = '';
      return rest;
    },
  };
}

/** The longest prefix of `text` after which no secret can still begin or be cut in two. */
function safeCut(text: string, secrets: readonly string[]): number {
  let cut = text.length;
  for (const secret of secrets) {
    for (let size = Math.min(secret.length - 1, text.length); size > 0; size -= 1) {
      if (text.endsWith(secret.slice(0, size))) {
        cut = Math.min(cut, text.length - size);
        break;
      }
    }
  }
  // A whole secret across the cut moves the cut before it; that can expose another, so repeat.
  for (let isMoved = true; isMoved;) {
    isMoved = false;
    for (const secret of secrets) {
      const start = text.indexOf(secret, Math.max(0, cut - secret.length + 1));
      if (start >= 0 && start < cut && start + secret.length > cut) {
        cut = start;
        isMoved = true;
      }
    }
  }
  return cut;
}
