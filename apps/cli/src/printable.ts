/**
 * Control characters other than newline and tab, written as `\uXXXX`: C0 (ESC starts every
 * terminal escape sequence, CR rewrites the line a CI log shows), DEL and C1 (U+009B is CSI on
 * terminals that read 8-bit controls). Everything the CLI prints passes through here, and much of
 * it is text a server chose (log lines, event messages, problem details, service names), so a
 * deployment's output cannot recolour, hide or forge lines in a terminal or a CI log, or set the
 * window title. The `\uXXXX` form is also JSON's own escape, so a --json document stays valid and
 * means the same value (JSON.stringify leaves U+007F–U+009F as they are).
 */
const UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
