import { Lexer, Parser } from 'yaml';
import { legitCompose } from '@hostctl/testing';
const run = (name: string, text: string) => {
  for (let r = 0; r < 2; r++) {
  let t = performance.now(); const lex = [...new Lexer().lex(text)]; const tl = performance.now()-t;
  t = performance.now(); const parser = new Parser(); let n=0; for (const l of lex) for (const _ of parser.next(l)) n++; for (const _ of parser.end()) n++; const tp = performance.now()-t;
  console.log(name, text.length, 'tokens', lex.length, 'lex', tl.toFixed(0), 'parse', tp.toFixed(0)); }
};
for (const n of [15_000, 30_000, 60_000]) run(`flow ${n}`, `x: [${'1,'.repeat(n)}1]\n`);
for (const n of [15_000, 30_000, 60_000]) run(`flowspace ${n}`, `x: [${'1, '.repeat(n)}1]\n`);
for (const n of [15_000, 30_000, 60_000]) run(`block ${n}`, `x:\n${'  - 1\n'.repeat(n)}`);
for (const n of [15_000, 30_000, 60_000]) run(`blockmap ${n}`, `x:\n${Array.from({length:n},(_, i)=>`  k${i}: 1\n`).join('')}`);
run('legit', legitCompose(20,150,60));
