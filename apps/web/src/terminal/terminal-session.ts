import {
  closeReason,
  parseServerFrame,
  resizeFrame,
  stdinFrames,
  terminalPath,
} from './terminal-protocol.ts';

/** What the terminal panel shows about its connection, in text (announced politely). */
export type TerminalState =
  | { kind: 'connecting' }
  | { kind: 'ready'; container: string }
  | { kind: 'exited'; container: string | null; exitCode: number }
  /** `failed`: the API or the connection ended it (shown as an alert); otherwise the person did. */
  | { kind: 'closed'; reason: string; detail: string | null; failed: boolean };

interface SessionHandlers {
  onState: (state: TerminalState) => void;
  onOutput: (data: string) => void;
}

/**
 * One terminal WebSocket, same-origin, so the browser sends the session cookie and its Origin
 * (the API refuses an upgrade from another origin). Frames in, frames out; it never reconnects on
 * its own: a new terminal is a new audited session, which the person asks for.
 */
export class TerminalSession {
  private readonly socket: WebSocket;
  private opened = false;
  private container: string | null = null;
  private exitCode: number | null = null;
  private errorDetail: string | null = null;
  private closedByUs = false;
  /** The last size asked for before the socket opened, sent as soon as it does. */
  private pendingSize: string | null = null;

  constructor(
    serviceId: string,
    component: string,
    private readonly handlers: SessionHandlers,
  ) {
    const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
    this.socket = new WebSocket(`${scheme}://${window.location.host}${terminalPath(serviceId, component)}`);
    handlers.onState({ kind: 'connecting' });
    this.socket.onopen = () => {
      this.opened = true;
      if (this.pendingSize) this.socket.send(this.pendingSize);
    };
    this.socket.onmessage = (event: MessageEvent) => this.receive(event.data);
    this.socket.onclose = (event) => this.closed(event.code);
  }

  send(data: string): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    for (const frame of stdinFrames(data)) this.socket.send(frame);
  }

  resize(cols: number, rows: number): void {
    const frame = resizeFrame(cols, rows);
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(frame);
    else this.pendingSize = frame;
  }

  /** Hangs up: the API tells the worker, which ends the exec's TTY. */
  close(): void {
    this.closedByUs = true;
    this.socket.close(1000);
    this.handlers.onState(
      this.exitCode === null
        ? { kind: 'closed', reason: 'You disconnected the terminal.', detail: null, failed: false }
        : { kind: 'exited', container: this.container, exitCode: this.exitCode },
    );
  }

  private receive(data: unknown): void {
    if (typeof data !== 'string') return;
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null) return;
    const frame = parseServerFrame(message as Record<string, unknown>);
    switch (frame?.type) {
      case 'ready':
        this.container = frame.container;
        this.handlers.onState({ kind: 'ready', container: frame.container });
        return;
      case 'output':
        this.handlers.onOutput(frame.data);
        return;
      case 'exit':
        this.exitCode = frame.exitCode;
        this.handlers.onState({ kind: 'exited', container: this.container, exitCode: frame.exitCode });
        return;
      case 'error':
        this.errorDetail = frame.detail || null;
        return;
      case undefined:
        return;
    }
  }

  private closed(code: number): void {
    if (this.closedByUs || this.exitCode !== null) return;
    this.handlers.onState({
      kind: 'closed',
      reason: closeReason(code, this.opened),
      detail: this.errorDetail,
      failed: true,
    });
  }
}
