/**
 * Splits a compose string-form `command`/`entrypoint` into argv the way compose does (POSIX
 * quoting rules, no expansion). No shell ever sees the text: the result goes to Docker as an array.
 * Returns undefined for an unterminated quote or a trailing backslash.
 */
export function splitShellWords(text: string): string[] | undefined {
  const words: string[] = [];
  let current = '';
  let hasWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i]!;
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else current += ch;
      continue;
    }
    if (ch === '\\') {
      const next = text[i + 1];
      if (next === undefined) return undefined;
      // Inside double quotes a backslash only escapes the characters POSIX lists.
      if (quote === '"' && !'"\\$`\n'.includes(next)) current += ch;
      current += next;
      hasWord = true;
      i += 1;
      continue;
    }
    if (quote === '"') {
      if (ch === '"') quote = undefined;
      else current += ch;
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      hasWord = true;
    } else if (/\s/.test(ch)) {
      if (hasWord) words.push(current);
      current = '';
      hasWord = false;
    } else {
      current += ch;
      hasWord = true;
    }
  }
  if (quote) return undefined;
  if (hasWord) words.push(current);
  return words;
}
