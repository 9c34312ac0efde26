import { sql, type RawBuilder } from 'kysely';

/**
 * A list bound as ONE parameter, `(SELECT value FROM json_each(?))`, for D1's limit of 100 bound
 * parameters per statement: `.where('id', 'in', jsonList(ids))` costs one parameter however many
 * ids, so it can sit beside other conditions. The same table function feeds multi-row inserts:
 * `INSERT INTO role_menu (role_id, menu_id) SELECT ?, value FROM json_each(?)`.
 */
export function jsonList<T extends number | string>(values: readonly T[]): RawBuilder<T> {
  return sql<T>`(SELECT value FROM json_each(${JSON.stringify(values)}))`;
}
