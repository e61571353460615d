import { describe, expect, it } from 'vitest';
import { parseCompose } from './compose.parser.js';
import { renderCompose } from './compose.renderer.js';
import { problemsOf, withService } from './test-helpers.js';

// deploy.update_config.order decides whether a redeploy starts the new container before the old
// one stops (docs/worker.md); everything else under update_config is Swarm's and is refused.
const orderOf = (extra: string) => parseCompose(withService(extra), {}).containers[0]?.updateOrder;

describe('deploy.update_config.order', () => {
  it('is absent unless the compose names it (the worker decides)', () => {
    expect(orderOf('')).toBeUndefined();
    expect(orderOf('    deploy: {resources: {limits: {memory: 64M}}}')).toBeUndefined();
  });

  it.each(['start-first', 'stop-first'])('accepts %s', (order) => {
    expect(orderOf(`    deploy: {update_config: {order: ${order}}}`)).toBe(order);
  });

  it('goes together with resource limits', () => {
    const plan = parseCompose(
      withService('    deploy: {resources: {limits: {memory: 64M}}, update_config: {order: start-first}}'),
      {},
    );
    expect(plan.containers[0]).toMatchObject({
      updateOrder: 'start-first',
      limits: { memoryBytes: 64 * 1024 * 1024 },
    });
  });

  it.each([
    [
      'an unknown order',
      '    deploy: {update_config: {order: blue-green}}',
      'services.web.deploy.update_config.order',
    ],
    [
      'a non-string order',
      '    deploy: {update_config: {order: 1}}',
      'services.web.deploy.update_config.order',
    ],
    [
      'Swarm-only keys',
      '    deploy: {update_config: {parallelism: 2}}',
      'services.web.deploy.update_config.parallelism',
    ],
    [
      'update_config that is not a mapping',
      '    deploy: {update_config: start-first}',
      'services.web.deploy.update_config',
    ],
    [
      'rollback_config',
      '    deploy: {rollback_config: {order: start-first}}',
      'services.web.deploy.rollback_config',
    ],
  ])('refuses %s, naming the field', (_name, line, path) => {
    expect(problemsOf(withService(line))).toContainEqual(expect.objectContaining({ path }));
  });

  it('survives rendering: parsing the rendered compose yields the same order', () => {
    const plan = parseCompose(withService('    deploy: {update_config: {order: stop-first}}'), {});
    expect(parseCompose(renderCompose(plan), {}).containers[0]?.updateOrder).toBe('stop-first');
  });
});
