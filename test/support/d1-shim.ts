import type { Database as Sqlite } from 'bun:sqlite';
import type { D1Database, D1PreparedStatement, D1Result, D1Value } from '../../src/adapters/workers/bindings.ts';

/**
 * A D1 binding stand-in over bun:sqlite with D1's result shape ({results, success, meta.changes,
 * meta.last_row_id}) and batch-as-transaction, so the D1 dialect can be tested without workerd.
 * The real thing is exercised by the end-to-end suite under `wrangler dev`.
 */
export function d1Shim(sqlite: Sqlite): D1Database & { statements: string[] } {
  const statements: string[] = [];
  const exec = (sql: string, values: D1Value[]): D1Result<any> => {
    statements.push(sql);
    const params = values.map((v) => (v instanceof ArrayBuffer ? new Uint8Array(v) : v));
    const rows = sqlite.prepare(sql).all(...(params as never[]));
    const meta = sqlite.query('SELECT changes() AS changes, last_insert_rowid() AS id').get() as { changes: number; id: number };
    return { results: rows as Record<string, unknown>[], success: true, meta: { changes: meta.changes, last_row_id: meta.id } };
  };
  const prepare = (sql: string, values: D1Value[] = []): D1PreparedStatement & { run$: () => D1Result<any> } => ({
    bind: (...v: D1Value[]) => prepare(sql, v),
    all: async () => exec(sql, values),
    run: async () => exec(sql, values),
    run$: () => exec(sql, values),
  });
  return {
    statements,
    prepare: (sql) => prepare(sql),
    async batch(stmts) {
      return sqlite.transaction(() => stmts.map((s) => (s as ReturnType<typeof prepare>).run$()))();
    },
  };
}
