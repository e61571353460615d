import type { GroupVersion } from './group-environment.js';
import type { DeploymentStatus, DeploymentTrigger } from '@hostctl/domain';

export type { DeploymentTrigger };

/** The shapes the worker's deployment store reads and writes (worker-deployments.store.ts). */

export interface WorkerDeployment {
  id: string;
  serviceId: string;
  trigger: DeploymentTrigger;
  status: DeploymentStatus;
  step: string | null;
  createdAt: Date;
  plan: unknown;
  commit: string | null;
  /** A redeploy pinned to one commit (a push webhook): checked out instead of the branch's head. */
  requestedCommit: string | null;
  /** trigger 'rollback': the deployment whose release this one runs again. */
  rollbackOf: string | null;
  /** component -> pinned image reference, recorded after the pull step. */
  imageDigests: Record<string, string> | null;
  /** The service's compose and variables this deployment ran (null until recorded, and for old rows). */
  sourceCompose: string | null;
  sourceVariables: Record<string, string> | null;
  /** Which of sourceVariables were secret (name → when set); null for older rows. */
  sourceSecretNames: Record<string, string> | null;
  /** The version of the service's variables it ran (services.variables_version); null for older rows. */
  sourceVariablesVersion: number | null;
  /** The variable groups it ran with, by version (docs/secrets.md#variable-groups); null for older rows. */
  sourceVariableGroups: GroupVersion[] | null;
  /** When it was first claimed: a resumed run's timeout counts from here. */
  startedAt: Date | null;
  /**
   * When the release's current window (stabilise, drain) began; non-null from the first window
   * until the deployment is settled: its job resumes there and owns the service meanwhile.
   */
  windowStartedAt: Date | null;
}

export interface DeploymentOutcome {
  deploymentId: string;
  serviceId: string;
  trigger: DeploymentTrigger;
  /** Event message; must never contain variable values. */
  message: string;
}

/** What a deployment ran, recorded as it learns it (rollback and history read it back). */
export interface DeploymentRecord {
  sourceCompose?: string;
  sourceVariables?: Record<string, string>;
  sourceSecretNames?: Record<string, string>;
  sourceVariablesVersion?: number;
  sourceVariableGroups?: GroupVersion[];
  imageDigests?: Record<string, string>;
  updateOrder?: 'start-first' | 'stop-first';
  /** What the runtime cannot honour from the plan (docs/deployments.md). */
  warnings?: string[];
}
