import { beforeAll, describe, expect, test } from 'bun:test';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Atomic } from '../src/core/ports.ts';
import type { Database } from '../src/db/schema.ts';
import { migrate } from '../src/adapters/server/migrate.ts';
import { openNodeSqliteBinding } from '../src/adapters/server/node-sqlite.ts';
import { D1_START_MS, RUNTIMES, makeTestApp } from './support/app.ts';

// One Atomic contract (core/ports.ts), the same body on bun:sqlite, node:sqlite and a real D1:
// rows for reads and writes with RETURNING, affected rows for every write, an insert id for every
// insert.

interface Subject {
  db: Kysely<Database>;
  atomic: Atomic;
  rows<T>(sql: string): Promise<T[]>;
}

const subjects: Record<string, () => Promise<Subject>> = {
  ...Object.fromEntries(
    RUNTIMES.map((runtime) => [
      runtime,
      async (): Promise<Subject> => {
        const t = await makeTestApp({ runtime });
        return { db: t.db, atomic: t.deps.atomic, rows: (q) => t.rows(q) };
      },
    ]),
  ),
  'node:sqlite': async () => {
    const b = openNodeSqliteBinding(':memory:', { exclusive: false });
    migrate(b.sql);
    return { db: b.db, atomic: b.atomic, rows: async <T>(q: string) => b.sql.query<T>(q) };
  },
};

const at = '2026-11-22T00:00:00.000Z';
const role = (code: string) => ({ name: code, code, status: 'enabled' as const, remark: null, created_at: at, updated_at: at });

for (const [name, open] of Object.entries(subjects)) {
  describe(`deps.atomic results on ${name}`, () => {
    let s: Subject;
    beforeAll(async () => {
      s = await open();
    }, D1_START_MS);

    test('each statement reports the same shape on every adapter', async () => {
      const { db } = s;
      const results = await s.atomic([
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
      const [inserted] = await s.rows<{ id: number }>("SELECT id FROM roles WHERE code = 'contract_a'");
      expect(results[0]!.insertId).toBe(BigInt(inserted!.id));
    });
  });
}
