import { Runner } from '../src/db/runner.ts';
import { qb } from '../src/db/compile.ts';
import { describe, expect, test } from 'bun:test';
import { countByTree, countedDelete } from '../src/db/log-counts.ts';
import { makeTestApp, type BunTestApp } from './support/app.ts';

// The prefix trees of migration 0017 under random traffic: keys that share starts of every length,
// differ only in ASCII case, are longer than the 48 characters a tree keeps, or are not ASCII; rows
// arriving and leaving in any order (the tree's shape then depends on history), and whole-log
// clears. After every round, for every start of every key and each status (and all statuses), the
// total countByTree reads must equal the number of rows starting with it, counted here in JS. log-counts.test.ts checks the same
// through the pages on Bun and D1; this file searches the shapes.

/** A small seeded generator (mulberry32): a failure names its seed and replays exactly. */
function generator(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}

// U+10FFFF: the last character, which a `text || U+10FFFF` range bound would cut off.
const ALPHABET = ['a', 'A', 'b', 'B', 'c', 'é', 'É', '0', '_', '.', ':', '\u{10FFFF}'];

/** What SQLite's NOCASE compares: ASCII letters folded, everything else as is. */
const fold = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const TREES = [
  { tree: 'login_log_name_tree', log: 'login_log', column: 'login_name', nocase: true, statuses: ['success', 'failure'] },
  { tree: 'login_log_ip_tree', log: 'login_log', column: 'ip', nocase: false, statuses: ['success', 'failure'] },
  { tree: 'op_log_name_tree', log: 'op_log', column: 'operator_name', nocase: true, statuses: [200, 409, 500] },
] as const;

async function expectExact(t: BunTestApp, keys: string[], when: string) {
  const starts = new Set<string>();
  for (const k of keys) for (let i = 1; i <= Math.min(48, [...k].length); i++) starts.add([...k].slice(0, i).join(''));
  expect(starts.size).toBeGreaterThan(100);
  for (const { tree, log, column, nocase, statuses } of TREES) {
    const rows = t.sqlite.query(`SELECT ${column} AS v, status FROM ${log}`).all() as { v: string | null; status: string | number }[];
    const norm = nocase ? fold : (s: string) => s;
    for (const start of starts) {
      const matching = rows.filter((r) => r.v !== null && norm(r.v).startsWith(norm(start)));
      for (const status of [undefined, ...statuses]) {
        const read = countByTree(tree, start, status)!;
        const got = Number((await t.deps.db.selectNoFrom(read.as('n')).executeTakeFirstOrThrow()).n);
        const want = matching.filter((r) => status === undefined || r.status === status).length;
        if (got !== want) expect({ when, tree, start, status, total: got }).toEqual({ when, tree, start, status, total: want });
      }
    }
    const bad = t.sqlite.query(`SELECT count(*) AS n FROM ${tree} WHERE n <= 0 OR own < 0 OR own > n`).get() as { n: number };
    expect({ when, tree, bad: bad.n }).toEqual({ when, tree, bad: 0 });
  }
}

describe('prefix trees (migration 0017) under random inserts, deletes and clears', () => {
  for (const seed of [1, 2]) {
    test(`seed ${seed}`, async () => {
      const t = await makeTestApp();
      const rnd = generator(seed);
      const word = () => {
        const length = rnd(8) === 0 ? 45 + rnd(10) : 1 + rnd(6);
        return Array.from({ length }, () => ALPHABET[rnd(ALPHABET.length)]).join('');
      };
      // Long keys sharing their first 48 characters (the tree keeps 48), plus short random ones.
      const long = 'L'.repeat(47);
      const keys = [...Array.from({ length: 300 }, word), `${long}a1`, `${long}a2`, `${long}A`, `${long}b`];
      const addLogin = t.sqlite.query(`INSERT INTO login_log (login_name, status, msg, ip, created_at) VALUES (?, ?, 'm', ?, '2026-01-01T00:00:00.000Z')`);
      const addOp = t.sqlite.query(`INSERT INTO op_log (module, action, method, path, operator_name, status, created_at) VALUES ('m', 'a', 'POST', '/', ?, ?, '2026-01-01T00:00:00.000Z')`);
      const add = (rows: number) => {
        for (let i = 0; i < rows; i++) {
          addLogin.run(keys[rnd(keys.length)]!, rnd(3) ? 'failure' : 'success', keys[rnd(keys.length)]!);
          addOp.run(rnd(6) ? keys[rnd(keys.length)]! : null, [200, 409, 500][rnd(3)]!);
        }
      };
      const removeSome = (rows: number) => {
        for (const log of ['login_log', 'op_log']) t.sqlite.run(`DELETE FROM ${log} WHERE id IN (SELECT id FROM ${log} ORDER BY random() LIMIT ${rows})`);
      };
      t.sqlite.run('DELETE FROM login_log');
      add(40);
      await expectExact(t, keys, 'first rows');
      for (let round = 0; round < 6; round++) {
        add(40);
        removeSome(rnd(50));
        await expectExact(t, keys, `round ${round}`);
      }
      // A whole-log delete through the flag: the trees are emptied, not updated row by row...
      for (const log of ['login_log', 'op_log'] as const) {
        const rows = Number((t.sqlite.query(`SELECT count(*) AS n FROM ${log}`).get() as { n: number }).n);
        const n = await new Runner(t.deps).write(countedDelete(qb.selectFrom(log).select((eb) => eb.fn.countAll<number>().as('n')), qb.deleteFrom(log), log));
        expect(n).toBe(rows);
      }
      for (const { tree } of TREES) expect({ tree, n: await t.count(tree) }).toEqual({ tree, n: 0 });
      expect(await t.count('log_bulk_delete')).toBe(0);
      // ...and row by row again afterwards.
      add(60);
      removeSome(20);
      await expectExact(t, keys, 'after a clear');
    }, 60_000);
  }
});
