/**
 * The `name` and file name of a multipart part, read from its Content-Disposition header the way
 * browsers and common clients actually write it. multipasta's parser follows RFC 7230's quoted
 * string, which stops at U+00FF: a raw UTF-8 `filename="名前.txt"` (what every browser sends)
 * made it drop the whole header, so the part lost its name and non-Latin uploads were refused.
 *
 * Accepted forms, `filename*` winning over `filename`:
 * - `filename="名前.txt"`: raw UTF-8 (WHATWG HTML: `"`, CR, LF sent as %22, %0D, %0A);
 * - `filename="%E5%90%8D.txt"`: a fully percent-encoded UTF-8 name (some HTTP libraries);
 * - `filename*=UTF-8''%E5%90%8D.txt` (RFC 5987/8187; ISO-8859-1 too);
 * - `\"` and `\\` as quoted-pairs (curl); any other backslash is literal (browsers never escape it).
 * The result is still untrusted text: sanitizeFileName makes it safe.
 */
export interface FormDisposition {
  name: string | undefined;
  fileName: string | undefined;
}

const PARAM_RE = /;\s*([!#$%&'*+.^\w`|~-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/gsu;

function unquote(v: string): string {
  const t = v.trim();
  if (!t.startsWith('"')) return t;
  return t.slice(1, -1).replace(/\\(["\\])/g, '$1');
}

/** Bytes of %XX escapes and plain characters, or null if a % is not followed by two hex digits. */
function percentBytes(s: string): number[] | null {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '%') {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9a-f]{2}$/i.test(hex)) return null;
      out.push(parseInt(hex, 16));
      i += 2;
    } else {
      const c = s.charCodeAt(i);
      if (c > 0x7f) return null;
      out.push(c);
    }
  }
  return out;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: number[]): string | null {
  try {
    return strictUtf8.decode(new Uint8Array(bytes));
  } catch {
    return null;
  }
}

/** RFC 8187 ext-value: charset'lang'pct-encoded. */
function extValue(v: string): string | undefined {
  const m = /^([\w!#$%&+^`{}~-]+)'[^']*'(.*)$/su.exec(v.trim());
  if (!m) return undefined;
  const bytes = percentBytes(m[2]!);
  if (!bytes) return undefined;
  const charset = m[1]!.toLowerCase();
  if (charset === 'utf-8') return decodeUtf8(bytes) ?? undefined;
  if (charset === 'iso-8859-1') return String.fromCharCode(...bytes);
  return undefined;
}

/** A plain filename: raw text, with percent-encoded UTF-8 (or the WHATWG escapes) decoded. */
function plainName(v: string): string {
  if (/%[89a-f][0-9a-f]/i.test(v)) {
    const bytes = percentBytes(v);
    const decoded = bytes ? decodeUtf8(bytes) : null;
    if (decoded !== null) return decoded;
  }
  return v.replace(/%22/gi, '"').replace(/%0d/gi, '\r').replace(/%0a/gi, '\n');
}

export function parseFormDisposition(header: string | undefined): FormDisposition {
  const result: FormDisposition = { name: undefined, fileName: undefined };
  if (!header) return result;
  const semi = header.indexOf(';');
  if (semi < 0 || header.slice(0, semi).trim().toLowerCase() !== 'form-data') return result;
  let plain: string | undefined;
  let ext: string | undefined;
  for (const m of header.slice(semi).matchAll(PARAM_RE)) {
    const key = m[1]!.toLowerCase();
    const value = m[2]!;
    if (key === 'name') result.name ??= unquote(value);
    else if (key === 'filename') plain ??= unquote(value);
    else if (key === 'filename*') ext ??= extValue(unquote(value));
  }
  result.fileName = ext ?? (plain === undefined ? undefined : plainName(plain));
  return result;
}
