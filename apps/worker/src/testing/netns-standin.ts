import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Stand-ins for what tenant code must not reach, built by the test itself so no traffic ever
 * leaves the machine:
 * - a "metadata server": busybox httpd in a network namespace of its own, joined to the host by
 *   a veth pair and addressed from 169.254.0.0/16 (link-local, like cloud metadata services);
 * - "host services": one HTTP server in the test process bound to host-owned addresses (the
 *   host end of the veth gets a TEST-NET-1 address; bridge gateways are added by `listenOn`),
 *   like Redis or an admin API bound to 0.0.0.0.
 * Interface names start with `veg`, never with the tenant bridge prefix, so the policy's own
 * wildcard does not cover the stand-in.
 */
export interface StandIn {
  /** 169.254.N.2: the server in the namespace. */
  linkLocal: string;
  /** 192.0.2.N: an address of the host (on the veth's host end). */
  hostAddress: string;
  port: number;
  /** What every stand-in answers. */
  body: string;
  /** Requests the host servers have seen. */
  hits(): number;
  /** Also serve on another host address (a bridge gateway). */
  listenOn(address: string): Promise<void>;
  /**
   * Lets the metadata server answer clients the host does not masquerade (Swarm tasks leave
   * docker_gwbridge with their own address): a route back to `cidr` through the host.
   */
  routeBack(cidr: string): Promise<void>;
  close(): Promise<void>;
}

export async function startStandIn(): Promise<StandIn> {
  const id = randomInt(0x100000, 0xffffff).toString(16);
  const octet = randomInt(100, 160);
  const netns = `hostctl-test-${id}`;
  const hostEnd = `veg${id}h`;
  const nsEnd = `veg${id}n`;
  const linkLocal = `169.254.${octet}.2`;
  const hostAddress = `192.0.2.${octet}`;
  const port = 18_000 + randomInt(0, 1000);
  const body = `stand-in ${id}`;
  const ip = (...args: string[]) => run('ip', args);
  const www = await mkdtemp(path.join(os.tmpdir(), 'hostctl-standin-'));
  await writeFile(path.join(www, 'index.html'), `${body}\n`);

  const servers: http.Server[] = [];
  let hits = 0;
  let httpd: ChildProcess | undefined;
  const close = async () => {
    httpd?.kill('SIGKILL');
    for (const server of servers) await new Promise((resolve) => server.close(resolve));
    await ip('netns', 'del', netns).catch(() => undefined);
    await ip('link', 'del', hostEnd).catch(() => undefined);
    await rm(www, { recursive: true, force: true });
  };
  const listenOn = async (address: string) => {
    const server = http.createServer((_req, res) => {
      hits += 1;
      res.end(`${body}\n`);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, address, () => resolve());
    });
    servers.push(server);
  };

  const routeBack = async (cidr: string) => {
    await ip('netns', 'exec', netns, 'ip', 'route', 'replace', cidr, 'via', `169.254.${octet}.1`);
  };

  try {
    await ip('netns', 'add', netns);
    await ip('link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', nsEnd);
    await ip('link', 'set', nsEnd, 'netns', netns);
    await ip('addr', 'add', `169.254.${octet}.1/24`, 'dev', hostEnd);
    await ip('addr', 'add', `${hostAddress}/32`, 'dev', hostEnd);
    await ip('link', 'set', hostEnd, 'up');
    await ip('netns', 'exec', netns, 'ip', 'addr', 'add', `${linkLocal}/24`, 'dev', nsEnd);
    await ip('netns', 'exec', netns, 'ip', 'link', 'set', nsEnd, 'up');
    await ip('netns', 'exec', netns, 'ip', 'link', 'set', 'lo', 'up');
    httpd = spawn(
      'ip',
      ['netns', 'exec', netns, 'busybox', 'httpd', '-f', '-p', `${linkLocal}:${port}`, '-h', www],
      { stdio: 'ignore' },
    );
    await listenOn(hostAddress);
    await waitUntilServing(`http://${linkLocal}:${port}/`);
  } catch (error) {
    await close();
    throw error;
  }
  return { linkLocal, hostAddress, port, body, hits: () => hits, listenOn, routeBack, close };
}

async function waitUntilServing(url: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const ok = await fetch(url, { signal: AbortSignal.timeout(1000) })
      .then((response) => response.ok)
      .catch(() => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`stand-in ${url} did not start`);
}
