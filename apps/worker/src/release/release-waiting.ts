import type { ReleaseStep } from './release-engine.js';

/**
 * Continuations (docs/deployments.md#continuations): a release in a window (stabilise, drain) does
 * not hold a worker slot while it waits for evidence. When the next look at the evidence is further
 * away than a poll, the engine throws ReleaseWaiting; the deploy processor moves the job to the
 * delayed set until `until` and the slot takes other jobs meanwhile. The resumed job enters the
 * engine at the window's step with the window's recorded start (`ResumePoint`), so the window
 * ends when it would have, had the job waited in place.
 */
export class ReleaseWaiting extends Error {
  constructor(readonly until: number) {
    super(`the release waits for its window until ${new Date(until).toISOString()}`);
    this.name = 'ReleaseWaiting';
  }
}

/** Where a resumed release continues: the step the deployment recorded, and its window's start. */
export interface ResumePoint {
  step: ReleaseStep;
  windowStartedAt: number;
}

/** A wait up to this long is slept in place: cheaper than a pause and a resume. */
export const INLINE_WAIT_MS = 250;
/**
 * Once the window's minimum has passed, how often a paused release looks at the evidence again
 * (each look is one resumed job: a few queries and one inspect per container).
 */
export const PAUSE_POLL_MS = 500;
/**
 * The longest pause: a cancel (the API marks the row) is noticed by the next look, so a paused
 * release undoes within this, as a release waiting in place did (its cancel poll).
 */
export const PAUSE_LONGEST_MS = 1000;

/** What the deploy processor lends a release that may pause (absent: windows are waited out in place). */
export interface Continuation {
  /** Set when this run resumes a release: it continues at that step. */
  resumeAt?: ResumePoint;
  /** The checkpoint of a window step: records the step and when its window began. */
  enterWindow(step: ReleaseStep, startedAt: number): Promise<void>;
}
