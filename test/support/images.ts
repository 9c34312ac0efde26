/** Byte builders for small but real PNG, GIF, JPEG and WebP files (headers built by hand). */

const enc = new TextEncoder();
export const ascii = (s: string) => Array.from(enc.encode(s));
export const be32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
export const be16 = (n: number) => [(n >>> 8) & 0xff, n & 0xff];
export const le16 = (n: number) => [n & 0xff, (n >>> 8) & 0xff];
export const le24 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff];
export const le32 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];
export const bytes = (...parts: number[][]) => new Uint8Array(parts.flat());

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();
export function crc32(data: number[]): number {
  let c = 0xffffffff;
  for (const b of data) c = (CRC_TABLE[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
export function pngChunk(type: string, data: number[]): number[] {
  const body = [...ascii(type), ...data];
  return [...be32(data.length), ...body, ...be32(crc32(body))];
}
export const PNG_SIG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
export function png(w: number, h: number): Uint8Array {
  const ihdr = [...be32(w), ...be32(h), 8, 6, 0, 0, 0];
  return bytes(PNG_SIG, pngChunk('IHDR', ihdr), pngChunk('IEND', []));
}

export function gif89(w: number, h: number): Uint8Array {
  return bytes(ascii('GIF89a'), le16(w), le16(h), [0x00, 0x00, 0x00], [0x3b]);
}

export const JFIF = [0xff, 0xe0, ...be16(16), ...ascii('JFIF'), 0, 1, 1, 0, ...be16(1), ...be16(1), 0, 0];
export const DQT = [0xff, 0xdb, ...be16(67), 0x00, ...new Array<number>(64).fill(1)];
export const DHT = [0xff, 0xc4, ...be16(20), 0x00, ...new Array<number>(16).fill(0), 0x00];
export const sof = (marker: number, w: number, h: number) => [
  0xff, marker, ...be16(17), 8, ...be16(h), ...be16(w), 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1,
];
export const SOS = [0xff, 0xda, ...be16(12), 3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0, 0x12, 0x34];
export const EOI = [0xff, 0xd9];
export function jpeg(w: number, h: number, marker = 0xc0): Uint8Array {
  return bytes([0xff, 0xd8], JFIF, DQT, DHT, sof(marker, w, h), SOS, EOI);
}

export function riff(chunkType: string, payload: number[]): Uint8Array {
  const chunk = [...ascii(chunkType), ...le32(payload.length), ...payload];
  return bytes(ascii('RIFF'), le32(4 + chunk.length), ascii('WEBP'), chunk);
}
export const vp8 = (w: number, h: number, tag0 = 0x10) =>
  riff('VP8 ', [tag0, 0x02, 0x00, 0x9d, 0x01, 0x2a, ...le16(w), ...le16(h), 0, 0]);
export function vp8l(w: number, h: number, version = 0): Uint8Array {
  const bits = (w - 1) | ((h - 1) << 14); // 28 bits; alpha bit 0
  const packed = [bits & 0xff, (bits >>> 8) & 0xff, (bits >>> 16) & 0xff, ((bits >>> 24) & 0x0f) | (version << 5)];
  return riff('VP8L', [0x2f, ...packed, 0]);
}
export const vp8x = (w: number, h: number) => riff('VP8X', [0x10, 0, 0, 0, ...le24(w - 1), ...le24(h - 1)]);
