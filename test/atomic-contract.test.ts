import { beforeAll, describe, expect, test } from 'bun:test';
import { CompiledQuery, sql } from 'kysely';
import { D1_START_MS, RUNTIMES, makeTestApp, type AnyTestApp } from './support/app';

// One Atomic contract (core/ports.ts), the same body on bun:sqlite and on a real D1: rows for
// reads and writes with RETURNING, affected rows for every write, an insert id for every insert.

for (const runtime of RUNTIMES) {
  describe(`deps.atomic results on ${runtime}`, () => {
    let t: AnyTestApp;
    beforeAll(async () => {
      t = await makeTestApp({ runtime });
    }, D1_START_MS);

    const now = () => new Date(t.clock.now()).toISOString();
    const role = (code: string) => ({ name: code, code, status: 'enabled' as const, remark: null, created_at: now(), updated_at: now() });

    test('each statement reports the same shape on every adapter', async () => {
      const { db } = t;
      const results = await t.deps.atomic([
        db.insertInto('roles').values(role('contract_a')).compile(),
        db.insertInto('roles').values(role('contract_b')).returning(['code']).compile(),
        db.updateTable('roles').set({ sort: 7 }).where('code', 'in', ['contract_a', 'contract_b']).returning('code').compile(),
        db.updateTable('roles').set({ sort: 8 }).where('code', '=', 'contract_a').compile(),
        db.deleteFrom('roles').where('code', '=', 'no_such_role').compile(),
        db.selectFrom('roles').select('code').where('code', 'like', 'contract_%').orderBy('code').compile(),
        // A guard statement (raw INSERT) that holds: it writes nothing.
        sql`INSERT INTO guard_failures (rule) SELECT 'stale_version' WHERE 1 = 0`.compile(db),
        CompiledQuery.raw("SELECT 'raw' AS r", []),
      ]);
      const shape = results.map((r) => ({ rows: r.rows, affected: r.numAffectedRows, hasInsertId: r.insertId !== undefined }));
      expect(shape).toEqual([
        { rows: [], affected: 1n, hasInsertId: true },
        { rows: [{ code: 'contract_b' }], affected: 1n, hasInsertId: true },
        { rows: [{ code: 'contract_a' }, { code: 'contract_b' }], affected: 2n, hasInsertId: false },
        { rows: [], affected: 1n, hasInsertId: false },
        { rows: [], affected: 0n, hasInsertId: false },
        { rows: [{ code: 'contract_a' }, { code: 'contract_b' }], affected: undefined, hasInsertId: false },
        { rows: [], affected: 0n, hasInsertId: true },
        { rows: [{ r: 'raw' }], affected: undefined, hasInsertId: false },
      ]);
      const inserted = await t.row<{ id: number }>("SELECT id FROM roles WHERE code = 'contract_a'");
      expect(results[0]!.insertId).toBe(BigInt(inserted!.id));
    });
  });
}
