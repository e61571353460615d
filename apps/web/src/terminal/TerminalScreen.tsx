import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useEffect, useImperativeHandle, useRef, type Ref } from 'react';
import { adoptBlockedStyles } from './adopt-blocked-styles.ts';

export interface TerminalScreenHandle {
  write: (data: string) => void;
  clear: () => void;
  focus: () => void;
  /** The size the screen has now, to send when a session opens. */
  size: () => { cols: number; rows: number };
}

interface TerminalScreenProps {
  ref: Ref<TerminalScreenHandle>;
  /** Names the terminal's input for assistive technology. */
  label: string;
  onInput: (data: string) => void;
  onResize: (cols: number, rows: number) => void;
}

/** How long after Escape a Tab leaves the terminal instead of reaching the shell (completion). */
const ESCAPE_WINDOW_MS = 1_000;

/**
 * The xterm.js screen, its own chunk (TerminalTab imports it lazily) so the rest of the dashboard
 * does not load xterm. It fits its box and reports each new size; it knows nothing of sockets.
 * Tab goes to the shell; Escape then Tab leaves the terminal, so the keyboard is never trapped.
 */
export default function TerminalScreen({ ref, label, onInput, onResize }: TerminalScreenProps) {
  const box = useRef<HTMLDivElement>(null);
  const terminal = useRef<Terminal | null>(null);
  const fit = useRef<FitAddon | null>(null);
  // The latest callbacks, read by xterm's listeners that are attached once.
  const callbacks = useRef({ onInput, onResize });
  callbacks.current = { onInput, onResize };

  useEffect(() => {
    const host = box.current;
    if (!host) return;
    const dropStyles = adoptBlockedStyles(host);
    const term = new Terminal({
      convertEol: false,
      cursorBlink: true,
      fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
      fontSize: 14,
      scrollback: 5_000,
      theme: { background: '#111418', foreground: '#e6e6e6', cursor: '#e6e6e6' },
    });
    const fitAddon = new FitAddon();
    term.loadAddon(fitAddon);
    term.open(host);
    let escapedAt = 0;
    term.attachCustomKeyEventHandler((event) => {
      if (event.type !== 'keydown') return true;
      if (event.key === 'Escape') escapedAt = Date.now();
      else if (event.key === 'Tab' && Date.now() - escapedAt < ESCAPE_WINDOW_MS) return false;
      return true;
    });
    const input = term.onData((data) => callbacks.current.onInput(data));
    const resized = term.onResize(({ cols, rows }) => callbacks.current.onResize(cols, rows));
    // Fitting reads the box's size: once now, then whenever the box changes (window, layout).
    const observer = new ResizeObserver(() => fitAddon.fit());
    observer.observe(host);
    fitAddon.fit();
    terminal.current = term;
    fit.current = fitAddon;
    return () => {
      observer.disconnect();
      input.dispose();
      resized.dispose();
      term.dispose();
      dropStyles();
      terminal.current = null;
      fit.current = null;
    };
  }, []);

  useEffect(() => terminal.current?.textarea?.setAttribute('aria-label', label), [label]);

  useImperativeHandle(ref, () => ({
    write: (data) => terminal.current?.write(data),
    clear: () => terminal.current?.reset(),
    focus: () => terminal.current?.focus(),
    size: () => ({ cols: terminal.current?.cols ?? 80, rows: terminal.current?.rows ?? 24 }),
  }));

  return <div ref={box} className="terminal-screen" />;
}
