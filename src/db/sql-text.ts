import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, type RawBuilder } from 'kysely';

/** A Kysely that only compiles (SQLite syntax, as both runtimes' dialects write it); it never runs anything. */
const compiler = new Kysely<never>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

/**
 * The text of an `sql` fragment that binds nothing (its values spelled as `sql.raw('+?1')`, refs or
 * literals), compiled once at module load: hot reads then run one constant text through deps.read
 * (a cached prepared statement) instead of compiling the fragment per call.
 */
export function sqlText(fragment: RawBuilder<unknown>): string {
  const q = fragment.compile(compiler);
  if (q.parameters.length > 0) throw new Error(`sqlText: the fragment binds ${q.parameters.length} value(s); spell them as placeholders`);
  return q.sql;
}
