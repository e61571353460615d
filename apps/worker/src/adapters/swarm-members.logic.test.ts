import { describe, expect, it } from 'vitest';
import { memberAddressesOf } from './swarm-members.js';

describe('the swarm members the egress policy denies', () => {
  it('takes each node’s address and a manager’s control address, once each, and leaves out what is not an IPv4 address', () => {
    expect(
      memberAddressesOf([
        // A manager some engines report as 0.0.0.0: its control address names it.
        { Status: { Addr: '0.0.0.0' }, ManagerStatus: { Addr: '10.0.0.10:2377' } },
        { Status: { Addr: '10.0.0.11' }, ManagerStatus: { Addr: '10.0.0.11:2377' } },
        { Status: { Addr: '10.0.0.2' } },
        { Status: { Addr: 'fd00::5' } },
        { Status: {} },
        {},
      ]),
    ).toEqual(['10.0.0.10', '10.0.0.11', '10.0.0.2']);
  });
});
