import { describe, expect, it } from 'vitest';
import { DEPLOY_METHODS, deploymentEventType, isRepositoryMethod, DEPLOYMENT_TRIGGERS } from './types.js';

describe('deploymentEventType', () => {
  it('files a creation as a deploy and keeps redeploy and rollback', () => {
    expect(DEPLOYMENT_TRIGGERS.map(deploymentEventType)).toEqual(['deploy', 'redeploy', 'rollback']);
  });
});

describe('isRepositoryMethod', () => {
  it('is true for the methods that clone a repository and false for written compose', () => {
    expect(DEPLOY_METHODS.filter(isRepositoryMethod)).toEqual(['git', 'ai']);
    expect(isRepositoryMethod('GIT')).toBe(false);
  });
});
