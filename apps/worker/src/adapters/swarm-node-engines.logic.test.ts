import { ConfigError } from '@hostctl/config';
import { describe, expect, it } from 'vitest';
import { parseNodeEngines } from './swarm-node-engines.js';

const problemsOf = (value: string): string[] => {
  try {
    parseNodeEngines(value);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error(`accepted ${value}`);
};

describe('SWARM_NODE_ENGINES', () => {
  it('maps each node hostname to the path of its engine socket; empty means none', () => {
    expect(parseNodeEngines('')).toEqual(new Map());
    expect(
      parseNodeEngines('node-b=unix:///run/hostctl/node-b.sock,node-c.example=unix:///var/run/c.sock'),
    ).toEqual(
      new Map([
        ['node-b', '/run/hostctl/node-b.sock'],
        ['node-c.example', '/var/run/c.sock'],
      ]),
    );
  });

  it('refuses an entry without a hostname or a unix socket, and a node named twice', () => {
    expect(problemsOf('=unix:///a.sock')).toEqual([
      'SWARM_NODE_ENGINES: "=unix:///a.sock" is not <node hostname>=unix:///<socket>',
    ]);
    expect(problemsOf('node-b=tcp://10.0.0.2:2375')).toEqual([
      'SWARM_NODE_ENGINES: "node-b=tcp://10.0.0.2:2375" is not <node hostname>=unix:///<socket>',
    ]);
    expect(problemsOf('node-b')).toHaveLength(1);
    expect(problemsOf('node-b=unix:///a.sock,node-b=unix:///b.sock')).toEqual([
      'SWARM_NODE_ENGINES: node node-b is named twice',
    ]);
  });
});
