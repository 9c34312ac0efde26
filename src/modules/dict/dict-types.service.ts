import type { Selectable } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import { whereContains } from '../../core/pagination.ts';
import { isoNow } from '../../core/time.ts';
import { qb } from '../../db/compile.ts';
import { idList } from '../../db/id-list.ts';
import { writeOf } from '../../db/plan.ts';
import { changedColumns, editBatch, recordReads } from '../../db/records.ts';
import type { Runner } from '../../db/runner.ts';
import type { DictTypesTable } from '../../db/schema.ts';
import type { DictType, DictTypeAddInput, DictTypeEditInput, DictTypePageInput, DictTypeParams } from './dict.schemas.ts';

type Row = Selectable<DictTypesTable>;
const COLUMNS = ['id', 'name', 'code', 'status', 'remark', 'version', 'created_at', 'updated_at'] as const;

const toDictType = (r: Row): DictType => ({
  id: r.id,
  name: r.name,
  code: r.code,
  status: r.status,
  remark: r.remark,
  version: r.version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const NOT_FOUND = (id: number) => `Dictionary type ${id} not found`;
const reads = recordReads({
  table: 'dict_types',
  columns: COLUMNS,
  map: toDictType,
  notFound: NOT_FOUND,
  sortColumns: { id: 'id', name: 'name', code: 'code', createdAt: 'created_at', updatedAt: 'updated_at' },
});
const STALE = 'version: the dictionary type was changed by someone else; reload it and try again';
const codeTaken = (code: string) => `code: '${code}' is already taken`;

/**
 * The rows a page of types selects for `params` (FROM and WHERE only): the page's filter, for
 * anything that must select the same rows (an export).
 */
export function dictTypeFilter(p: DictTypeParams) {
  let q = qb.selectFrom('dict_types');
  q = whereContains(q, 'dict_types.name', p.name);
  q = whereContains(q, 'dict_types.code', p.code);
  if (p.status) q = q.where('dict_types.status', '=', p.status);
  return q;
}

export function pageDictTypes(deps: Ports, run: Runner, req: DictTypePageInput) {
  return reads.page(deps, run, req, dictTypeFilter(req.params));
}

export const dictTypeDetail = reads.detail;

export async function addDictType(deps: Ports, run: Runner, input: DictTypeAddInput): Promise<DictType> {
  const now = isoNow(deps.clock);
  // A taken code is the unique index's 409; the insert answers with its row.
  return run.write({
    batch: [
      qb
        .insertInto('dict_types')
        .values({ name: input.name, code: input.code, status: input.status ?? 'enabled', remark: input.remark ?? null, created_at: now, updated_at: now })
        .returning(COLUMNS)
        .compile(),
    ],
    errors: { unique: codeTaken(input.code) },
    finish: reads.answer,
  });
}

export async function editDictType(deps: Ports, run: Runner, input: DictTypeEditInput): Promise<DictType> {
  const set = changedColumns(input, { name: 'name', code: 'code', status: 'status', remark: 'remark' });
  return run.write({
    batch: editBatch('dict_types', input, set, isoNow(deps.clock), COLUMNS),
    errors: { unique: codeTaken(input.code ?? ''), messages: { out_of_scope: NOT_FOUND(input.id), stale_version: STALE } },
    finish: reads.answer,
  });
}

/** Deletes types with their items, all in one batch; unknown ids are ignored. */
export async function deleteDictTypes(run: Runner, ids: number[]): Promise<void> {
  await run.write(
    writeOf([
      qb.deleteFrom('dict_data').where('type_code', 'in', qb.selectFrom('dict_types').select('code').where('id', 'in', idList(ids))).compile(),
      qb.deleteFrom('dict_types').where('id', 'in', idList(ids)).compile(),
    ]),
  );
}
