/** Entity tags for conditional requests (files, images, dictionaries). */

// Strips the weak prefix and makes sure the value is a quoted opaque-tag, so
// callers may pass either `"abc"`, `W/"abc"` or a bare `abc`.
function opaqueTag(tag: string): string {
  const t = tag.trim().replace(/^W\//, '');
  return t.startsWith('"') && t.endsWith('"') && t.length >= 2 ? t : `"${t}"`;
}

/**
 * If-None-Match evaluation (RFC 9110 §13.1.2), which uses weak comparison:
 * `W/"x"` matches `"x"`. Entity-tags may themselves contain commas, so the
 * list is scanned tag by tag rather than split on ",".
 */
export function etagMatches(ifNoneMatch: string | null | undefined, etag: string): boolean {
  if (ifNoneMatch == null) return false;
  const header = ifNoneMatch.trim();
  if (header === '') return false;
  if (header === '*') return true;
  const wanted = opaqueTag(etag);

  let i = 0;
  while (i < header.length) {
    const c = header[i];
    if (c === ' ' || c === '\t' || c === ',') {
      i++;
      continue;
    }
    let j = i;
    if (header.startsWith('W/', j)) j += 2;
    if (header[j] !== '"') {
      // Malformed member (e.g. unquoted): skip it rather than fail the whole list.
      const comma = header.indexOf(',', j);
      if (comma === -1) break;
      i = comma + 1;
      continue;
    }
    const close = header.indexOf('"', j + 1);
    if (close === -1) break;
    if (header.slice(j, close + 1) === wanted) return true;
    i = close + 1;
  }
  return false;
}

/**
 * A weak entity tag for a JSON answer: the SHA-256 of the data it carries (the envelope around it
 * differs per request, by its traceId, hence weak). Derived from the content, not from a counter,
 * so it stays right across restores and deployments.
 */
export async function weakEtagOf(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  let hex = '';
  for (const b of digest.subarray(0, 16)) hex += b.toString(16).padStart(2, '0');
  return `W/"${hex}"`;
}
