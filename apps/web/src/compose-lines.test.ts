import { describe, expect, it } from 'vitest';
import { lineOfPath } from './compose-lines.ts';

const COMPOSE = `services:
  db:
    image: postgres:16
    privileged: false
  web:
    image: nginx
    # a comment
    privileged: true
    ports:
      - "80:80"
      - "443:443"
`;

describe('lineOfPath', () => {
  it('follows keys down the indentation to the offending line', () => {
    expect(lineOfPath(COMPOSE, 'services.web.privileged')).toBe(8);
    expect(lineOfPath(COMPOSE, 'services.db.privileged')).toBe(4);
    expect(lineOfPath(COMPOSE, 'services.web')).toBe(5);
  });

  it('counts list items by their index', () => {
    expect(lineOfPath(COMPOSE, 'services.web.ports.1')).toBe(11);
    expect(lineOfPath(COMPOSE, '/body/compose/services/web/ports/0')).toBe(10);
  });

  it('points at the deepest key it found, or nowhere', () => {
    expect(lineOfPath(COMPOSE, 'services.web.volumes')).toBe(5);
    expect(lineOfPath(COMPOSE, 'networks.front')).toBeNull();
    expect(lineOfPath('{ services: {} }', 'services.web')).toBeNull();
  });
});
