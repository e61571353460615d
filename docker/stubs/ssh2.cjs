// Stands in for the npm package ssh2 in the worker's bundle (docker/bundle.mjs, `stubs`).
// docker-modem loads ssh2 for its ssh:// transport, and ssh2 instantiates a 16 MiB WebAssembly
// memory (its poly1305) as it loads: 16 MiB of the worker's idle RSS for a transport it never
// uses, since the worker reaches every engine through a unix socket (DOCKER_SOCKET,
// SWARM_DOCKER_HOST and SWARM_NODE_ENGINES accept nothing else).
'use strict';

class Client {
  constructor() {
    throw new Error('the ssh:// Docker transport is not part of the hostctl worker (unix sockets only)');
  }
}

module.exports = { Client };
