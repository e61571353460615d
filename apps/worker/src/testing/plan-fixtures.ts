import type { Plan, PlanContainer } from '@hostctl/compose';

/** A one-component plan serving HTTP on 8080 with `image` (the stack's busybox serves a page). */
export function webPlan(image: string, overrides: Partial<PlanContainer> = {}): Plan {
  const web: PlanContainer = {
    name: 'web',
    image,
    environment: {},
    labels: {},
    volumes: [],
    ports: [8080],
    dependsOn: [],
    restart: 'always',
    init: true,
    limits: {},
    ...overrides,
  };
  return { containers: [web], volumes: [], web: { container: 'web', port: 8080 } };
}
