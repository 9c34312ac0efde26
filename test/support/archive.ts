import { readFileSync, writeFileSync } from 'node:fs';

/**
 * A copy of a backup archive at `dest` with one byte of `content` (a blob's text, found in the tar)
 * flipped: its size is unchanged, so only the checksum can tell.
 */
export function damagedCopy(archive: string, dest: string, content: string): string {
  const bytes = readFileSync(archive);
  const at = bytes.indexOf(Buffer.from(content));
  if (at < 0) throw new Error(`"${content}" is not in ${archive}`);
  bytes[at] = bytes[at]! ^ 0x20;
  writeFileSync(dest, bytes);
  return dest;
}
