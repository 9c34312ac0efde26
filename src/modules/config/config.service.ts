import { sql, type Selectable } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import { badRequest, conflict } from '../../core/errors.ts';
import { whereContains } from '../../core/pagination.ts';
import { isoNow } from '../../core/time.ts';
import { qb } from '../../db/compile.ts';
import { guardStatement } from '../../db/guards.ts';
import { idList } from '../../db/id-list.ts';
import { writeOf } from '../../db/plan.ts';
import { changedColumns, editBatch, recordReads } from '../../db/records.ts';
import type { Runner } from '../../db/runner.ts';
import type { ConfigsTable } from '../../db/schema.ts';
import { assertConfigValue } from './config-values.ts';
import type { ConfigAddInput, ConfigEditInput, ConfigPageInput, ConfigParams, ConfigRecord } from './config.schemas.ts';

type Row = Selectable<ConfigsTable>;
const COLUMNS = ['id', 'name', 'config_key', 'config_value', 'type', 'remark', 'version', 'created_at', 'updated_at'] as const;

const toConfig = (r: Row): ConfigRecord => ({
  id: r.id,
  name: r.name,
  key: r.config_key,
  value: r.config_value,
  type: r.type,
  remark: r.remark,
  version: r.version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const NOT_FOUND = (id: number) => `Parameter ${id} not found`;
const reads = recordReads({
  table: 'configs',
  columns: COLUMNS,
  map: toConfig,
  notFound: NOT_FOUND,
  sortColumns: { id: 'id', name: 'name', key: 'config_key', createdAt: 'created_at', updatedAt: 'updated_at' },
});
const STALE = 'version: the parameter was changed by someone else; reload it and try again';
const keyTaken = (key: string) => `key: '${key}' is already taken`;

/** The rows a page of parameters selects for `params` (FROM and WHERE only), for anything that must select the same rows. */
export function configFilter(p: ConfigParams) {
  let q = qb.selectFrom('configs');
  q = whereContains(q, 'configs.name', p.name);
  q = whereContains(q, 'configs.config_key', p.key);
  if (p.type) q = q.where('configs.type', '=', p.type);
  return q;
}

export function pageConfigs(deps: Ports, run: Runner, req: ConfigPageInput) {
  return reads.page(deps, run, req, configFilter(req.params));
}

export const configDetail = reads.detail;

/** Adds a custom parameter (the built-in ones come with the migrations); a taken key is 409. */
export async function addConfig(deps: Ports, run: Runner, input: ConfigAddInput): Promise<ConfigRecord> {
  const value = input.value ?? '';
  assertConfigValue(input.key, value, deps.config.PASSWORD_MIN_LENGTH);
  const now = isoNow(deps.clock);
  return run.write({
    batch: [
      qb
        .insertInto('configs')
        .values({ name: input.name, config_key: input.key, config_value: value, type: 'custom', remark: input.remark ?? null, created_at: now, updated_at: now })
        .returning(COLUMNS)
        .compile(),
    ],
    errors: { unique: keyTaken(input.key) },
    finish: reads.answer,
  });
}

/**
 * Partial update under the version check. A new key or value depends on the row (a built-in one
 * keeps its key and takes only the values its behaviour reads), so the row is read first then
 * (the read carries the auth statement); the version guard of the write covers any change in
 * between. `onKey` learns the key as soon as it is known (the op log hides secret values).
 */
export async function editConfig(deps: Ports, run: Runner, input: ConfigEditInput, onKey?: (key: string) => void): Promise<ConfigRecord> {
  if (input.key !== undefined || input.value !== undefined) {
    const current = await reads.row(run, input.id);
    onKey?.(current.config_key);
    if (current.version !== input.version) throw conflict(STALE);
    const key = input.key ?? current.config_key;
    if (current.type === 'builtIn' && key !== current.config_key) throw badRequest(`key: the key of a built-in parameter cannot change`);
    if (input.value !== undefined) assertConfigValue(key, input.value, deps.config.PASSWORD_MIN_LENGTH);
  }
  const set = changedColumns(input, { name: 'name', key: 'config_key', value: 'config_value', remark: 'remark' });
  return run.write({
    batch: editBatch('configs', input, set, isoNow(deps.clock), COLUMNS),
    errors: { unique: keyTaken(input.key ?? ''), messages: { out_of_scope: NOT_FOUND(input.id), stale_version: STALE } },
    finish: reads.answer,
  });
}

/** Deletes custom parameters; a built-in one among them refuses the whole batch (400). Unknown ids are ignored. */
export async function deleteConfigs(run: Runner, ids: number[]): Promise<void> {
  const explain = async () => {
    const builtIn = await run.first<{ config_key: string }>(
      qb.selectFrom('configs').select('config_key').where('id', 'in', idList(ids)).where('type', '=', 'builtIn').orderBy('id').limit(1).compile(),
    );
    if (builtIn) throw badRequest(`ids: ${builtIn.config_key} is a built-in parameter and cannot be deleted`);
  };
  await run.write(
    writeOf(
      [
        guardStatement('config_builtin', sql`EXISTS (SELECT 1 FROM configs WHERE id IN ${idList(ids)} AND type = 'builtIn')`),
        qb.deleteFrom('configs').where('id', 'in', idList(ids)).compile(),
      ],
      undefined,
      explain,
    ),
  );
}
