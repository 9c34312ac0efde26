/**
 * How many parameters SQLite allocates for `sql` (what `sqlite3_bind_parameter_count` answers, and
 * bun:sqlite's `paramsCount`): node:sqlite has no way to ask, so this reads the SQL the way
 * SQLite's tokenizer does. Quotes, bracketed identifiers and comments hide what is inside them;
 * `?` takes the next index, `?NNN` index NNN, and `:name` / `@name` / `$name` the next index the
 * first time a name appears.
 */
export function countSqlParams(sql: string): number {
  let max = 0;
  const named = new Set<string>();
  let i = 0;
  const n = sql.length;
  const skipTo = (close: string, from: number) => {
    const end = sql.indexOf(close, from);
    return end < 0 ? n : end + close.length;
  };
  while (i < n) {
    const ch = sql[i]!;
    if (ch === "'" || ch === '"' || ch === '`') {
      // A doubled quote is an escaped one: skipping to the next quote and going on reads it as two
      // adjacent literals, which hides the same text.
      i = skipTo(ch, i + 1);
    } else if (ch === '[') {
      i = skipTo(']', i + 1);
    } else if (ch === '-' && sql[i + 1] === '-') {
      i = skipTo('\n', i + 2);
    } else if (ch === '/' && sql[i + 1] === '*') {
      i = skipTo('*/', i + 2);
    } else if (ch === '?') {
      let j = i + 1;
      while (j < n && sql[j]! >= '0' && sql[j]! <= '9') j++;
      max = j > i + 1 ? Math.max(max, Number(sql.slice(i + 1, j))) : max + 1;
      i = j;
    } else if ((ch === ':' || ch === '@' || ch === '$') && /[\p{L}\p{N}_$]/u.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (j < n && /[\p{L}\p{N}_$]/u.test(sql[j]!)) j++;
      const name = sql.slice(i, j);
      if (!named.has(name)) {
        named.add(name);
        max++;
      }
      i = j;
    } else {
      i++;
    }
  }
  return max;
}
