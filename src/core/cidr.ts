/**
 * Address allow-lists of API keys: CIDR blocks (`203.0.113.0/24`, `2001:db8::/32`, or a single
 * address, meaning /32 or /128), parsed strictly and matched against the client address. An
 * IPv4-mapped IPv6 address (`::ffff:203.0.113.7`, as dual-stack sockets report IPv4 peers) matches
 * IPv4 blocks. Pure code: no runtime API.
 */

/** An address as 16 bytes (IPv4 as IPv4-mapped IPv6) and whether it was written as IPv4. */
interface Address {
  bytes: Uint8Array;
  v4: boolean;
}

export interface Cidr {
  bytes: Uint8Array;
  /** Prefix length over the 128-bit form (an IPv4 /24 is 96 + 24). */
  bits: number;
  v4: boolean;
}

const V4_PART = /^(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$/;

function parseV4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => V4_PART.test(p))) return undefined;
  return parts.map(Number);
}

function parseV6(text: string): Uint8Array | undefined {
  let body = text;
  let tail: number[] = [];
  // A dotted IPv4 tail (`::ffff:1.2.3.4`) is the last 32 bits.
  const lastColon = body.lastIndexOf(':');
  if (lastColon >= 0 && body.includes('.', lastColon)) {
    const v4 = parseV4(body.slice(lastColon + 1));
    if (!v4) return undefined;
    tail = v4;
    body = body.slice(0, lastColon + 1) + '0:0';
  }
  const halves = body.split('::');
  if (halves.length > 2) return undefined;
  const group = /^[0-9a-fA-F]{1,4}$/;
  const split = (s: string) => (s === '' ? [] : s.split(':'));
  const head = split(halves[0]!);
  const rest = halves.length === 2 ? split(halves[1]!) : [];
  if (![...head, ...rest].every((g) => group.test(g))) return undefined;
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest].map((g) => parseInt(g, 16));
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  if (tail.length === 4) out.set(tail, 12);
  return out;
}

/** An IPv4 or IPv6 address (no zone, no brackets), or undefined. */
export function parseAddress(text: string): Address | undefined {
  const t = text.trim();
  const v4 = parseV4(t);
  if (v4) {
    const bytes = new Uint8Array(16);
    bytes[10] = 0xff;
    bytes[11] = 0xff;
    bytes.set(v4, 12);
    return { bytes, v4: true };
  }
  if (!t.includes(':') || t.length > 45) return undefined;
  const bytes = parseV6(t);
  return bytes ? { bytes, v4: false } : undefined;
}

/**
 * A CIDR block, or the reason it is not one. Host bits must be zero (`10.0.0.1/8` is refused: it
 * almost always means a typo, and accepting it would widen what the writer meant).
 */
export function parseCidr(text: string): Cidr | string {
  const [addr = '', prefix, extra] = text.trim().split('/');
  if (extra !== undefined) return 'must be an address or address/prefix';
  const a = parseAddress(addr);
  if (!a) return 'must be an IPv4 or IPv6 address, optionally with /prefix';
  const max = a.v4 ? 32 : 128;
  let len = max;
  if (prefix !== undefined) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(prefix) || Number(prefix) > max) return `prefix must be 0..${max}`;
    len = Number(prefix);
  }
  const bits = a.v4 ? 96 + len : len;
  for (let i = bits; i < 128; i++) {
    if (a.bytes[i >> 3]! & (0x80 >> (i & 7))) return 'has bits set after the prefix (write the network address)';
  }
  return { bytes: a.bytes, bits, v4: a.v4 };
}

/** The canonical text of a block (lower case, shortest IPv6 form is not attempted: as parsed, re-joined). */
export function formatCidr(c: Cidr): string {
  if (c.v4) return `${Array.from(c.bytes.slice(12)).join('.')}/${c.bits - 96}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((c.bytes[i]! << 8) | c.bytes[i + 1]!).toString(16));
  return `${groups.join(':')}/${c.bits}`;
}

/** Whether `address` lies in `block` (an IPv4-mapped IPv6 address matches IPv4 blocks). */
export function cidrContains(block: Cidr, address: string): boolean {
  const a = parseAddress(address);
  if (!a) return false;
  for (let i = 0; i < block.bits; i++) {
    const mask = 0x80 >> (i & 7);
    if ((a.bytes[i >> 3]! & mask) !== (block.bytes[i >> 3]! & mask)) return false;
  }
  return true;
}

/** Whether `address` is allowed by `blocks` (texts as stored; an empty list allows every address). */
export function addressAllowed(blocks: readonly string[], address: string): boolean {
  if (blocks.length === 0) return true;
  for (const text of blocks) {
    const c = parseCidr(text);
    if (typeof c !== 'string' && cidrContains(c, address)) return true;
  }
  return false;
}
