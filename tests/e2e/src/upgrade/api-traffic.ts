import { setTimeout as sleep } from 'node:timers/promises';
import { apiClient } from '@hostctl/testing';

/**
 * API clients during a rollout: one loop of authenticated list requests spread round-robin over the
 * API replicas in the rotation, as a load balancer in front of them would. A replica is taken out
 * of the rotation before it is stopped (a load balancer's drain); a request already sent to it must
 * still be answered. Anything but a 200 (or no answer) is a failure.
 */
export function startApiTraffic(key: string, replicas: string[]) {
  const rotation = [...replicas];
  const byReplica: Record<string, number> = {};
  const failed: string[] = [];
  let isStopped = false;
  let turn = 0;
  const loop = (async () => {
    while (!isStopped) {
      const replica = rotation[turn++ % rotation.length]!;
      const at = new Date().toISOString().slice(11, 23);
      try {
        const reply = await apiClient(replica, key).get('/api/services?per_page=5');
        if (reply.status === 200) byReplica[replica] = (byReplica[replica] ?? 0) + 1;
        else failed.push(`${at} ${replica} ${reply.status} ${JSON.stringify(reply.body).slice(0, 120)}`);
      } catch (error) {
        failed.push(`${at} ${replica} no answer: ${String(error)}`);
      }
      await sleep(20);
    }
  })();
  return {
    add: (replica: string) => void rotation.push(replica),
    remove: (replica: string) => void rotation.splice(rotation.indexOf(replica), 1),
    summary: () => ({ byReplica, failed }),
    async stop() {
      isStopped = true;
      await loop;
    },
  };
}
