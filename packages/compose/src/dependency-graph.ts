import type { Plan, PlanContainer } from './plan.js';
import { child, type Problems } from './problems.js';

/** Reports depends_on entries naming unknown services, self-references and cycles. */
export function checkDependencies(containers: PlanContainer[], problems: Problems): void {
  const byName = new Map(containers.map((container) => [container.name, container]));
  for (const container of containers) {
    for (const dependency of container.dependsOn) {
      const at = child(child('services', container.name), 'depends_on');
      if (dependency === container.name) problems.add(at, `${dependency} cannot depend on itself`);
      else if (!byName.has(dependency)) problems.add(at, `unknown service ${dependency}`);
    }
  }
  const state = new Map<string, 'visiting' | 'done'>();
  const reported = new Set<string>();
  const visit = (name: string, trail: string[]): void => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') {
      const cycle = [...trail.slice(trail.indexOf(name)), name];
      const key = [...cycle].sort().join(',');
      if (!reported.has(key)) {
        reported.add(key);
        problems.add(child(child('services', name), 'depends_on'), `dependency cycle: ${cycle.join(' -> ')}`);
      }
      return;
    }
    state.set(name, 'visiting');
    for (const dependency of byName.get(name)?.dependsOn ?? []) {
      if (byName.has(dependency) && dependency !== name) visit(dependency, [...trail, name]);
    }
    state.set(name, 'done');
  };
  for (const container of containers) visit(container.name, []);
}

/** Containers ordered so each comes after what it depends on (document order otherwise). */
export function startOrder(plan: Plan): PlanContainer[] {
  const byName = new Map(plan.containers.map((container) => [container.name, container]));
  const ordered: PlanContainer[] = [];
  const seen = new Set<string>();
  const visit = (container: PlanContainer): void => {
    if (seen.has(container.name)) return;
    seen.add(container.name);
    for (const dependency of container.dependsOn) {
      const found = byName.get(dependency);
      if (found) visit(found);
    }
    ordered.push(container);
  };
  plan.containers.forEach(visit);
  return ordered;
}
