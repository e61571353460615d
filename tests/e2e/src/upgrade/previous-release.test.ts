import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '@hostctl/db';
import { ROOT } from '../stack.js';
import { checkNewMigrations, destructiveStatements } from './migration-guard.js';
import {
  isAncestorOfHead,
  migrationsAt,
  previousReleaseCommit,
  PIN_FILE,
  resolveCommit,
} from './previous-release.js';

/**
 * The static half of the upgrade promise (docs/operations.md#upgrading): the pinned previous
 * release is one this branch grew from, and the migrations added since are expand-only.
 */
describe('the previous release and the migrations since', () => {
  it(`${PIN_FILE} names a commit that HEAD descends from`, async () => {
    const commit = await resolveCommit(ROOT, await previousReleaseCommit(ROOT));
    expect(await isAncestorOfHead(ROOT, commit), `${commit} is not an ancestor of HEAD`).toBe(true);
  });

  it('the migrations added since the previous release are expand-only (or marked as contract steps)', async () => {
    const commit = await resolveCommit(ROOT, await previousReleaseCommit(ROOT));
    expect(await checkNewMigrations(MIGRATIONS_DIR, await migrationsAt(ROOT, commit))).toEqual([]);
  });

  describe('the guard', () => {
    const temp: string[] = [];
    afterAll(() => Promise.all(temp.map((dir) => rm(dir, { recursive: true, force: true }))));

    it('fails on a destructive migration planted in a copy of prisma/migrations', async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'hostctl-migrations-'));
      temp.push(dir);
      await cp(MIGRATIONS_DIR, dir, { recursive: true });
      const released = await migrationsAt(ROOT, 'HEAD');
      await mkdir(path.join(dir, '20991231000000_planted'));
      await writeFile(
        path.join(dir, '20991231000000_planted/migration.sql'),
        'ALTER TABLE "services" ADD COLUMN "slug" TEXT;\nALTER TABLE "services" DROP COLUMN "name";\n',
      );
      expect(await checkNewMigrations(dir, released)).toEqual([
        {
          migration: '20991231000000_planted',
          statement: 'ALTER TABLE "services" DROP COLUMN "name"',
          why: 'drops a column',
        },
      ]);
    });

    it.each([
      ['ALTER TABLE "a" RENAME COLUMN "b" TO "c";', 'renames'],
      ['ALTER TABLE "a" ALTER COLUMN "b" TYPE BIGINT;', "changes a column's type"],
      ['ALTER TABLE "a" ALTER COLUMN "b" SET NOT NULL;', 'required'],
      ['ALTER TABLE "a" ADD COLUMN "x" TEXT, ADD COLUMN "b" TEXT NOT NULL;', 'no default'],
      ['DROP TABLE "a";', 'drops a table'],
      ['ALTER TABLE "a" ADD CONSTRAINT "a_b" CHECK ("b" IS NOT NULL) NOT VALID;', 'adds a check'],
    ])('flags %s', (sql, why) => {
      expect(
        destructiveStatements('m', sql)
          .map((problem) => problem.why)
          .join(),
      ).toContain(why);
    });

    it.each([
      'ALTER TABLE "a" ADD COLUMN "b" TEXT NOT NULL DEFAULT \'\';',
      'CREATE TABLE "a" ("id" UUID NOT NULL, CONSTRAINT "a_pkey" PRIMARY KEY ("id"));',
      'CREATE INDEX "a_b_idx" ON "a" ("b");',
      '-- contract: 0.9 stopped reading "b" (the release before this one)\nALTER TABLE "a" DROP COLUMN "b";',
    ])('lets %s through', (sql) => {
      expect(destructiveStatements('m', sql)).toEqual([]);
    });
  });
});
