import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, type Compilable, type RawBuilder } from 'kysely';
import type { Database } from './schema.ts';
import type { Stmt } from './plan.ts';

/**
 * The one query builder of the request path: a Kysely that only compiles (SQLite syntax, as both
 * runtimes' dialects write it) and never runs anything. Statements are written with it and handed
 * to the request's runner (db/runner.ts) as values; nothing is built per request that could be
 * built once (see prepare below).
 */
export const qb = new Kysely<Database>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

/**
 * The text of an `sql` fragment that binds nothing (its values spelled as `sql.raw('+?1')`, refs or
 * literals), compiled once at module load: hot reads then run one constant text through a cached
 * prepared statement instead of compiling the fragment per call.
 */
export function sqlText(fragment: RawBuilder<unknown>): string {
  const q = fragment.compile(qb);
  if (q.parameters.length > 0) throw new Error(`sqlText: the fragment binds ${q.parameters.length} value(s); spell them as placeholders`);
  return q.sql;
}

/** A value a prepared statement binds per request, standing in for it while the statement is compiled. */
class Slot {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}

/** A statement compiled once; `bind` fills in the request's values (the same order every time). */
export interface Prepared<P> {
  readonly sql: string;
  bind(values: P): Stmt;
}

/**
 * Compile once, bind many. `build` writes the statement with Kysely as usual, taking each value
 * that changes per request from its argument (`p.id`): what it gets there are stand-ins, which
 * Kysely compiles as bound parameters. The SQL text is compiled once, here; a request only binds:
 *
 *   const BY_ID = prepare<{ id: number }>((p) => qb.selectFrom('roles').selectAll().where('id', '=', p.id));
 *   run.read(rowsOf(BY_ID.bind({ id })))
 *
 * A stand-in must reach Kysely as a value (a parameter), never be inspected or turned into text
 * (sql.lit, string concatenation): that is refused here, where it can be seen.
 */
export function prepare<P extends Record<string, unknown>>(build: (p: P) => Compilable<unknown> | RawBuilder<unknown>): Prepared<P> {
  const stand = new Proxy({} as P, { get: (_t, name) => new Slot(String(name)) });
  const q = build(stand).compile(qb);
  const names = q.parameters.map((v) => (v instanceof Slot ? v.name : undefined));
  const fixed = q.parameters.map((v) => (v instanceof Slot ? undefined : v));
  if (/\[object Object\]/.test(q.sql)) throw new Error(`prepare: a stand-in was turned into text: ${q.sql.slice(0, 120)}`);
  const text = q.sql;
  return {
    sql: text,
    bind(values) {
      const parameters = new Array<unknown>(names.length);
      for (let i = 0; i < names.length; i++) {
        const name = names[i];
        parameters[i] = name === undefined ? fixed[i] : (values as Record<string, unknown>)[name];
      }
      return { sql: text, parameters };
    },
  };
}
