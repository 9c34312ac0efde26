import { describe, expect, test } from 'bun:test';
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { countingDeps } from './support/counting.ts';
import { Budget, DELETE_CHUNK, RUN_BUDGET } from '../src/modules/maintenance/budget.ts';
import { cleanup } from '../src/modules/maintenance/cleanup.ts';
import { makeTestApp, type TestApp } from './support/app.ts';
import { sha256Hex, upload } from './support/files.ts';

// The scheduled cleanup must fit one Workers invocation whatever the backlog: each run makes at
// most RUN_BUDGET database statements and blob calls, deletes in chunks, and the next run continues
// where it stopped. Statements are counted from outside (test/support/counting.ts).

const DAY = 86_400_000;

/** One cleanup run with its database statements counted. */
async function counted(t: TestApp, budget?: Budget) {
  const counting = countingDeps(t.deps);
  const counts = await cleanup(counting.deps, budget);
  return { counts, statements: counting.calls() };
}

describe('bounded, resumable cleanup', () => {
  test('a backlog of old log rows, captchas and sessions is deleted in chunks over several bounded runs', async () => {
    const t = await makeTestApp({ env: { LOG_RETENTION_DAYS: '30' } });
    const old = new Date(t.clock.now() - 40 * DAY).toISOString();
    const past = new Date(t.clock.now() - 60_000).toISOString();
    t.sqlite.run(
      `INSERT INTO login_log (login_name, ip, status, msg, created_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5200) SELECT 'x' || i, '10.0.0.1', 'failure', 'old', ? FROM n`,
      [old],
    );
    t.sqlite.run(
      `INSERT INTO captchas (key, answer_hash, expires_at, created_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1200) SELECT 'k' || i, 'h', ?, ? FROM n`,
      [past, past],
    );
    const fresh = t.count('login_log');
    // A budget of 8 statements: captchas take 3 (500 + 500 + 200), sessions and rate limits one
    // each (nothing to delete), then 3 chunks of the log; the blob sweep gets nothing.
    const first = await counted(t, new Budget(8));
    expect(first.statements).toBe(8);
    expect(first.counts).toMatchObject({ captchas: 1200, loginLog: 3 * DELETE_CHUNK, more: 1 });
    expect(t.count('captchas')).toBe(0);
    // The default budget finishes the rest in one run, well under the Workers limit of 1000.
    const second = await counted(t);
    expect(second.statements).toBeLessThanOrEqual(RUN_BUDGET);
    expect(second.counts).toMatchObject({ loginLog: 5200 - 3 * DELETE_CHUNK, more: 0 });
    expect(t.count('login_log')).toBe(fresh - 5200);
  });

  test('the orphan sweep walks the store from a saved cursor: bounded runs, every orphan removed, referenced blobs kept', async () => {
    const t = await makeTestApp({ env: { BLOB_GRACE_HOURS: '1' } });
    const token = await t.login();
    const kept = (await upload(t, 'sysFile', token, { filename: 'kept.txt', data: 'referenced bytes' })).data.sha256 as string;
    const old = (Date.now() - 3 * 3_600_000) / 1000;
    const orphanKeys: string[] = [];
    for (let i = 0; i < 260; i++) {
      const key = await sha256Hex(new TextEncoder().encode(`orphan ${i}`));
      const dir = join(t.filesDir, key.slice(0, 2), key.slice(2, 4));
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, key), `orphan ${i}`);
      utimesSync(join(dir, key), old, old);
      orphanKeys.push(key);
    }
    const kept_dir = join(t.filesDir, kept.slice(0, 2), kept.slice(2, 4));
    utimesSync(join(kept_dir, kept), old, old);
    t.clock.set(Date.now());
    const stored = () => readdirSync(t.filesDir, { recursive: true }).filter((p) => /[0-9a-f]{64}$/.test(String(p))).length;
    expect(stored()).toBe(261);

    let runs = 0;
    let removed = 0;
    for (;;) {
      const r = await counted(t, new Budget(60));
      runs++;
      expect(r.statements).toBeLessThanOrEqual(60);
      removed += r.counts.blobsOrphaned!;
      if (!r.counts.more) break;
      expect(runs).toBeLessThan(30);
      // Resumes from the last key checked, not from the start.
      const cursor = t.sqlite.query(`SELECT position FROM maintenance_cursors WHERE name = 'blob_orphans'`).get() as { position: string };
      expect(cursor.position).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(runs).toBeGreaterThan(4);
    expect(removed).toBe(260);
    expect(stored()).toBe(1);
    expect((t.sqlite.query(`SELECT position FROM maintenance_cursors WHERE name = 'blob_orphans'`).get() as { position: string }).position).toBe('');
    expect(readdirSync(kept_dir)).toContain(kept);
  });
});
