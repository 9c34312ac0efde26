// The one user fixture lives in ./rbac; re-exported for the files that import it from here.
export { USER_PASSWORD, userWithCodes } from './rbac.ts';

/** A body for a page request or batch action, and the request forms every test file tries. */
export const BAD_IDS: [string, unknown][] = [
  ['a string', ['1']],
  ['an injection string', '1 OR 1=1'],
  ['an injection string inside', ['1 OR 1=1']],
  ['a negative id', [-1]],
  ['zero', [0]],
  ['a fraction', [1.5]],
  ['an unsafe integer', [2 ** 53]],
  ['a nested array', [[1]]],
  ['an object', { id: 1 }],
  ['an empty array', []],
  ['101 ids', Array.from({ length: 101 }, (_, i) => i + 1)],
  ['null', null],
];

/** Bodies every `page` action must refuse with 400. */
export const BAD_PAGE_REQUESTS: [string, unknown][] = [
  ['pageSize 0', { pageSize: 0 }],
  ['pageSize 101', { pageSize: 101 }],
  ['pageNo 0', { pageNo: 0 }],
  ['pageNo as a string', { pageNo: '1' }],
  ['a fractional pageSize', { pageSize: 2.5 }],
  ['an unknown top-level field', { pageNo: 1, where: '1=1' }],
  ['an unknown param', { params: { nope: 'x' } }],
  ['params as an array', { params: [] }],
  ['an injection in sortField', { sortField: 'id; DROP TABLE users' }],
  ['a column outside the whitelist in sortField', { sortField: 'password_hash' }],
  ['a bad sortOrder', { sortOrder: 'sideways' }],
  ['searchCount as a string', { searchCount: 'false' }],
];
