import { badRequest } from '../../core/errors.ts';

/**
 * The value mappings between RuoYi and our API, in one place so each has one test:
 * status strings, ids and id lists, times, page requests and date ranges.
 */

export type Status = 'enabled' | 'disabled';

/** RuoYi '0' = normal, '1' = disabled (strings, also in its dictionaries). */
export const toRuoyiStatus = (s: Status): '0' | '1' => (s === 'enabled' ? '0' : '1');

/** '0'/'1' (or 0/1) → ours; anything else is a 400 naming the field. */
export function fromRuoyiStatus(v: unknown, field = 'status'): Status {
  if (v === '0' || v === 0) return 'enabled';
  if (v === '1' || v === 1) return 'disabled';
  throw badRequest(`${field}: must be '0' (normal) or '1' (disabled)`);
}

/** An optional status filter: absent or '' → undefined. */
export const statusFilter = (v: string | undefined): Status | undefined => (v === undefined || v === '' ? undefined : fromRuoyiStatus(v));

const ID = /^[1-9][0-9]{0,15}$/;

/** One numeric id from a path segment, a query value or a JSON number/string. */
export function idOf(v: unknown, field = 'id'): number {
  const text = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : '';
  if (!ID.test(text) || !Number.isSafeInteger(Number(text))) throw badRequest(`${field}: must be a positive integer id`);
  return Number(text);
}

/** `3,4` (a path segment or query value: RuoYi joins id lists with commas) → [3, 4]; at most 1000. */
export function idListOf(v: unknown, field = 'ids'): number[] {
  const text = Array.isArray(v) ? v.join(',') : typeof v === 'number' ? String(v) : typeof v === 'string' ? v : '';
  const parts = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (parts.length > 1000) throw badRequest(`${field}: at most 1000 ids`);
  return [...new Set(parts.map((p) => idOf(p, field)))];
}

/** An optional id (RuoYi sends '' or null for none, and 0 for the root). */
export function optionalId(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null || v === '' || v === 0 || v === '0') return undefined;
  return idOf(v, field);
}

/**
 * RuoYi prints several times raw (profile, op-log detail, header notices): `yyyy-MM-dd HH:mm:ss`,
 * here in UTC (what we store). Its tables parse this form too.
 */
export function ruoyiTime(iso: string | null | undefined): string | null {
  if (!iso) return null;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return null;
  return d.toISOString().slice(0, 19).replace('T', ' ');
}

/** Optional text from a RuoYi form: '' and null mean "none". */
export const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
/** Optional text whose "none" we store as null. */
export const textOrNull = (v: unknown): string | null => text(v) ?? null;

/** Ours is asc/desc; RuoYi's tables send ascending/descending. */
export function sortOrderOf(isAsc: string | undefined): 'asc' | 'desc' | undefined {
  if (isAsc === undefined || isAsc === '') return undefined;
  if (isAsc === 'ascending' || isAsc === 'asc') return 'asc';
  if (isAsc === 'descending' || isAsc === 'desc') return 'desc';
  throw badRequest('isAsc: must be ascending or descending');
}

function positiveInt(v: string | undefined, field: string, def: number): number {
  if (v === undefined || v === '') return def;
  if (!/^[0-9]{1,8}$/.test(v) || Number(v) < 1) throw badRequest(`${field}: must be a positive integer`);
  return Number(v);
}

/**
 * A RuoYi list query → our page request's frame (pageNo, pageSize, the created range). RuoYi's
 * date pickers send local dates, `params[beginTime]`/`params[endTime]`, the end day inclusive
 * (ours: a date-only createdTo covers the whole day, in UTC).
 */
export function pageOf(q: Record<string, string>, maxSize = 1000) {
  const pageSize = Math.min(positiveInt(q.pageSize, 'pageSize', 10), maxSize);
  return { pageNo: positiveInt(q.pageNum, 'pageNum', 1), pageSize, range: dateRangeOf(q) };
}

/** `params[beginTime]`/`params[endTime]` → our createdFrom/createdTo (a list's and its export's). */
export function dateRangeOf(q: Record<string, string>): { createdFrom?: string; createdTo?: string } {
  return {
    ...(text(q['params[beginTime]']) ? { createdFrom: q['params[beginTime]'] } : {}),
    ...(text(q['params[endTime]']) ? { createdTo: q['params[endTime]'] } : {}),
  };
}

/** Drops undefined values (our request schemas are strict about unknown keys, not about absent ones). */
export function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as Partial<T>;
}

/**
 * The fields of `next` (what an echoed RuoYi form says) whose values differ from `stored` (the
 * record as we hold it); null and '' count as the same "none". RuoYi's edits send everything
 * back, and our edits ask for extra codes by the fields they get.
 */
export function changedFrom(next: Record<string, unknown>, stored: Record<string, unknown>): Record<string, unknown> {
  const none = (v: unknown) => v === null || v === '' || v === undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(next)) if (v !== stored[k] && !(none(v) && none(stored[k]))) out[k] = v;
  return out;
}

/**
 * The seeded dictionaries whose values RuoYi's pages compare with their own (a status switch's
 * '0'/'1', a notice type '1'/'2', a config type 'Y'/'N'): [RuoYi's value, ours]. The dialect maps
 * the items it serves and the fields it translates through this one table, both ways, so RuoYi's
 * `row.status == dict.value` keeps holding; our API and our stored values stay ours
 * (docs/ruoyi.md, "Dictionaries"). A value not in the table (an item an administrator added,
 * a notice's `draft`) passes unchanged both ways.
 */
export const DICT_VALUES: Readonly<Record<string, readonly (readonly [ruoyi: string, ours: string])[]>> = {
  sys_normal_disable: [['0', 'enabled'], ['1', 'disabled']],
  sys_job_status: [['0', 'enabled'], ['1', 'disabled']],
  sys_user_sex: [['0', 'male'], ['1', 'female'], ['2', 'unknown']],
  sys_yes_no: [['Y', 'true'], ['N', 'false']],
  sys_show_hide: [['0', 'false'], ['1', 'true']],
  sys_notice_type: [['1', 'notice'], ['2', 'announcement']],
  sys_notice_status: [['0', 'published'], ['1', 'closed']],
  sys_common_status: [['0', 'success'], ['1', 'failure']],
};

const toRuoyiValues = new Map(Object.entries(DICT_VALUES).map(([type, pairs]) => [type, new Map(pairs.map(([r, o]) => [o, r]))]));
const toOurValues = new Map(Object.entries(DICT_VALUES).map(([type, pairs]) => [type, new Map(pairs.map(([r, o]) => [r, o]))]));

/** An item value of dictionary `type` as RuoYi's pages compare it (unmapped values unchanged). */
export const ruoyiDictValue = (type: string, ours: string): string => toRuoyiValues.get(type)?.get(ours) ?? ours;
/** A value RuoYi sent for dictionary `type`, in ours (unmapped values unchanged). */
export const ourDictValue = (type: string, ruoyi: string): string => toOurValues.get(type)?.get(ruoyi) ?? ruoyi;

/**
 * An optional filter on a value of dictionary `type` (a status select): absent or '' → none;
 * one of RuoYi's values in the table → ours; anything else is a 400 naming the field and the
 * values RuoYi's select offers.
 */
export function dictFilter(type: string, v: string | undefined, field: string): string | undefined {
  if (v === undefined || v === '') return undefined;
  const ours = toOurValues.get(type)?.get(v);
  if (ours === undefined) throw badRequest(`${field}: must be ${(DICT_VALUES[type] ?? []).map(([r, o]) => `'${r}' (${o})`).join(' or ')}`);
  return ours;
}
