import { Kysely, type KyselyProps } from 'kysely';
import type { Deps } from '../../src/deps.ts';

// Kysely over another Kysely's executor: only queries are run through it.
const UNUSED = Object.freeze({}) as never;

/**
 * `deps` with every database call counted (Kysely queries, read, readMany statements, atomic
 * batches), for tests of work that runs outside a request (maintenance) and so has no runner meter.
 */
export function countingDeps(deps: Deps): { deps: Deps; calls: () => number } {
  let calls = 0;
  const exec = deps.db.getExecutor();
  const executor = exec.withConnectionProvider({
    provideConnection: (consumer) =>
      exec.provideConnection((connection) =>
        consumer({
          executeQuery: (query) => (calls++, connection.executeQuery(query)),
          streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
        }),
      ),
  });
  const props: KyselyProps = { config: UNUSED, driver: UNUSED, dialect: UNUSED, executor };
  const readMany = Object.assign((s: Parameters<Deps['readMany']>[0]) => ((calls += deps.readMany.oneTrip ? 1 : s.length), deps.readMany(s)), {
    oneTrip: deps.readMany.oneTrip,
  });
  return {
    deps: {
      ...deps,
      db: new Kysely(props) as Deps['db'],
      read: (sql, params) => (calls++, deps.read(sql, params)),
      // Every read through `read`, where it is counted.
      readNow: undefined,
      readManyNow: undefined,
      readMany,
      atomic: (queries) => (calls++, deps.atomic(queries)),
    },
    calls: () => calls,
  };
}
