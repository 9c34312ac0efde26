import type { Ports } from '../../core/ports.ts';
import { weakEtagOf } from '../../core/etag.ts';
import type { Runner } from '../../db/runner.ts';
import { staleSql, versionOf, versionRead, VersionedCache } from '../../db/versions.ts';
import type { DictItem } from './dict.schemas.ts';

/*
 * sysDict/items and sysDict/all, asked by every page of an admin SPA: served from a per-app
 * (process / isolate) cache of every enabled item of every enabled type, under the `dicts` version
 * (migrations/0020: every write to dict_types or dict_data bumps it in its own transaction). The
 * request's one batch carries the caller's auth statement, the version, and the rows on the
 * condition, in SQL, that the cache is stale: one round trip whether it hits or not, and a write is
 * seen on the very next request in every isolate. The runner judges the auth row before `finish`,
 * so a revoked token gets its 401, never a 304.
 */
const ITEMS_IF_STALE_SQL = `SELECT t.code AS type_code, d.id, d.label, d.value, d.sort, d.tag_type, d.css_class, d.is_default, d.remark
  FROM dict_types t LEFT JOIN dict_data d ON d.type_code = t.code AND d.status = 'enabled'
  WHERE t.status = 'enabled' AND ${staleSql} ORDER BY t.code, d.sort, d.id`;

interface ItemRow {
  type_code: string;
  id: number | null;
  label: string;
  value: string;
  sort: number;
  tag_type: DictItem['tagType'];
  css_class: string | null;
  is_default: number;
  remark: string | null;
}

/** An answer as served: its data and its ETag (derived once per version and key). */
interface Served {
  data: unknown;
  etag: Promise<string>;
}

/** Per app, the enabled items by type code, of the last version read. */
const caches = new WeakMap<object, VersionedCache<Map<string, DictItem[]>, Served>>();
function dictCache(deps: Ports) {
  let cache = caches.get(deps);
  if (!cache) caches.set(deps, (cache = new VersionedCache(10_000)));
  return cache;
}

function byType(rows: ItemRow[]): Map<string, DictItem[]> {
  const out = new Map<string, DictItem[]>();
  for (const r of rows) {
    let items = out.get(r.type_code);
    if (!items) out.set(r.type_code, (items = []));
    if (r.id === null) continue; // an enabled type without enabled items
    items.push({
      id: r.id,
      typeCode: r.type_code,
      label: r.label,
      value: r.value,
      sort: r.sort,
      tagType: r.tag_type,
      cssClass: r.css_class,
      isDefault: r.is_default === 1,
      remark: r.remark,
    });
  }
  return out;
}

/** Key of the whole set in a snapshot's derived values (no type code holds `*`). */
const ALL = '*';

/** The answer for a code no enabled type has (not remembered per code: any text may be asked); made on first use, not at load. */
let none: Served | undefined;
const noneServed = () => (none ??= { data: [], etag: weakEtagOf('[]') });

/** One answer from the snapshot of the current version: `code`'s items, or every type (ALL). */
async function served(deps: Ports, run: Runner, key: string): Promise<{ data: unknown; etag: string }> {
  const cache = dictCache(deps);
  const held = cache.held;
  const snapshot = await run.read({
    reads: [versionRead('dicts'), { sql: ITEMS_IF_STALE_SQL, parameters: ['dicts', held?.version ?? -1] }],
    finish: ([version, rows]) => cache.at(versionOf(version), held, byType((rows ?? []) as ItemRow[])),
  });
  const known = key === ALL || snapshot.rows.has(key);
  let answer = known ? snapshot.derived.get(key) : noneServed();
  if (!answer) {
    const data = key === ALL ? Object.fromEntries(snapshot.rows) : snapshot.rows.get(key);
    answer = cache.derive(snapshot, key, { data, etag: weakEtagOf(JSON.stringify(data)) });
  }
  return { data: answer.data, etag: await answer.etag };
}

/** The enabled items of enabled type `code`, by sort ([] for an unknown or disabled type). */
export function dictItems(deps: Ports, run: Runner, code: string) {
  return served(deps, run, code) as Promise<{ data: DictItem[]; etag: string }>;
}

/** Every enabled type with its enabled items: `{ <typeCode>: items[] }`. */
export function allDicts(deps: Ports, run: Runner) {
  return served(deps, run, ALL) as Promise<{ data: Record<string, DictItem[]>; etag: string }>;
}
