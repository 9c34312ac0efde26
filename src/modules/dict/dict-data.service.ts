import type { Selectable } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import { badRequest } from '../../core/errors.ts';
import { whereContains } from '../../core/pagination.ts';
import { isoNow } from '../../core/time.ts';
import { qb } from '../../db/compile.ts';
import { idList } from '../../db/id-list.ts';
import { writeOf } from '../../db/plan.ts';
import { changedColumns, editBatch, recordReads } from '../../db/records.ts';
import type { Runner } from '../../db/runner.ts';
import type { DictDataTable } from '../../db/schema.ts';
import type { DictData, DictDataAddInput, DictDataEditInput, DictDataPageInput, DictDataParams } from './dict.schemas.ts';

type Row = Selectable<DictDataTable>;
const COLUMNS = [
  'id', 'type_code', 'label', 'value', 'sort', 'status', 'tag_type', 'css_class', 'is_default', 'remark', 'version', 'created_at', 'updated_at',
] as const;

const toDictData = (r: Row): DictData => ({
  id: r.id,
  typeCode: r.type_code,
  label: r.label,
  value: r.value,
  sort: r.sort,
  status: r.status,
  tagType: r.tag_type,
  cssClass: r.css_class,
  isDefault: r.is_default === 1,
  remark: r.remark,
  version: r.version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const NOT_FOUND = (id: number) => `Dictionary item ${id} not found`;
const reads = recordReads({
  table: 'dict_data',
  columns: COLUMNS,
  map: toDictData,
  notFound: NOT_FOUND,
  sortColumns: { id: 'id', sort: 'sort', label: 'label', value: 'value', createdAt: 'created_at', updatedAt: 'updated_at' },
});
const STALE = 'version: the dictionary item was changed by someone else; reload it and try again';
const valueTaken = (value: string | undefined) => `value: '${value ?? ''}' is already an item of this dictionary type`;
const unknownType = (code: string | undefined) => () => badRequest(`typeCode: there is no dictionary type '${code ?? ''}'`);

/** The rows a page of items selects for `params` (FROM and WHERE only), for anything that must select the same rows. */
export function dictDataFilter(p: DictDataParams) {
  let q = qb.selectFrom('dict_data');
  if (p.typeCode !== undefined) q = q.where('dict_data.type_code', '=', p.typeCode);
  q = whereContains(q, 'dict_data.label', p.label);
  if (p.status) q = q.where('dict_data.status', '=', p.status);
  return q;
}

export function pageDictData(deps: Ports, run: Runner, req: DictDataPageInput) {
  return reads.page(deps, run, req, dictDataFilter(req.params));
}

export const dictDataDetail = reads.detail;

const flag = (b: boolean | undefined) => (b === undefined ? undefined : b ? 1 : 0);

/** Adds an item: its type must exist (400: the key refuses it), its value be new within the type (409: the unique index). */
export async function addDictData(deps: Ports, run: Runner, input: DictDataAddInput): Promise<DictData> {
  const now = isoNow(deps.clock);
  return run.write({
    batch: [
      qb
        .insertInto('dict_data')
        .values({
          type_code: input.typeCode,
          label: input.label,
          value: input.value,
          sort: input.sort ?? 0,
          status: input.status ?? 'enabled',
          tag_type: input.tagType ?? 'default',
          css_class: input.cssClass ?? null,
          is_default: flag(input.isDefault) ?? 0,
          remark: input.remark ?? null,
          created_at: now,
          updated_at: now,
        })
        .returning(COLUMNS)
        .compile(),
    ],
    errors: { unique: valueTaken(input.value), foreignKey: unknownType(input.typeCode) },
    finish: reads.answer,
  });
}

export async function editDictData(deps: Ports, run: Runner, input: DictDataEditInput): Promise<DictData> {
  const set = changedColumns(
    { ...input, isDefault: flag(input.isDefault) },
    { typeCode: 'type_code', label: 'label', value: 'value', sort: 'sort', status: 'status', tagType: 'tag_type', cssClass: 'css_class', isDefault: 'is_default', remark: 'remark' },
  );
  return run.write({
    batch: editBatch('dict_data', input, set, isoNow(deps.clock), COLUMNS),
    errors: {
      unique: valueTaken(input.value),
      foreignKey: unknownType(input.typeCode),
      messages: { out_of_scope: NOT_FOUND(input.id), stale_version: STALE },
    },
    finish: reads.answer,
  });
}

/** Deletes items; unknown ids are ignored. */
export async function deleteDictData(run: Runner, ids: number[]): Promise<void> {
  await run.write(writeOf([qb.deleteFrom('dict_data').where('id', 'in', idList(ids)).compile()]));
}
