/** The header a D1 bookmark travels in, both ways (read replication; see docs/deploy-cloudflare.md, "Read replicas"). */
export const BOOKMARK_HEADER = 'X-D1-Bookmark';

/**
 * A bookmark as a client may send it back: D1's are dash-separated groups of hex digits
 * (`00000085-0000024c-00004c6d-8e61117b…`). Anything else, or none, is ignored (undefined), never an
 * error: the request then reads from any replica, as a client without a bookmark would.
 */
const BOOKMARK = /^[0-9a-f]{8}(?:-[0-9a-f]{8,64}){1,7}$/i;

export function validBookmark(value: string | undefined | null): string | undefined {
  const v = value?.trim();
  return v && v.length <= 512 && BOOKMARK.test(v) ? v : undefined;
}
