// Image type and size detection from the first bytes of an upload.
//
// The declared Content-Type and file extension are attacker-controlled, so the
// only thing we trust is the magic number. Anything we cannot positively
// identify as a raster format (SVG, HTML, PDF, polyglots without a valid
// header) is rejected, because those can carry script when served inline.
//
// Dimensions are read by our own tiny parsers instead of a decoder: we only
// need the header to refuse decompression bombs before anything downstream
// (thumbnailers, browsers) allocates a pixel buffer.

export type ImageKind = 'png' | 'jpeg' | 'gif' | 'webp';

/** The media types images are stored and served with. */
export const IMAGE_CONTENT_TYPES: Record<ImageKind, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const;

// Decompressed RGBA at 50 MP is ~200 MB: the most we are willing to let a
// thumbnailer or a browser tab allocate for a single upload.
export const MAX_IMAGE_PIXELS = 50_000_000;

function startsWith(head: Uint8Array, bytes: readonly number[], offset = 0): boolean {
  if (head.length < offset + bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) {
    if (head[offset + i] !== bytes[i]) return false;
  }
  return true;
}

function ascii(head: Uint8Array, offset: number, text: string): boolean {
  if (head.length < offset + text.length) return false;
  for (let i = 0; i < text.length; i++) {
    if (head[offset + i] !== text.charCodeAt(i)) return false;
  }
  return true;
}

// Callers must bounds-check first; `?? 0` only satisfies noUncheckedIndexedAccess.
function u8(b: Uint8Array, i: number): number {
  return b[i] ?? 0;
}
function u16be(b: Uint8Array, i: number): number {
  return (u8(b, i) << 8) | u8(b, i + 1);
}
function u16le(b: Uint8Array, i: number): number {
  return u8(b, i) | (u8(b, i + 1) << 8);
}
function u24le(b: Uint8Array, i: number): number {
  return u8(b, i) | (u8(b, i + 1) << 8) | (u8(b, i + 2) << 16);
}
// `>>> 0` keeps values with the top bit set positive instead of negative int32.
function u32be(b: Uint8Array, i: number): number {
  return ((u8(b, i) << 24) | (u8(b, i + 1) << 16) | (u8(b, i + 2) << 8) | u8(b, i + 3)) >>> 0;
}

export function sniffImage(head: Uint8Array): { kind: ImageKind; contentType: string } | null {
  let kind: ImageKind | null = null;
  if (startsWith(head, PNG_SIGNATURE)) kind = 'png';
  else if (startsWith(head, [0xff, 0xd8, 0xff])) kind = 'jpeg';
  else if (ascii(head, 0, 'GIF87a') || ascii(head, 0, 'GIF89a')) kind = 'gif';
  else if (ascii(head, 0, 'RIFF') && ascii(head, 8, 'WEBP')) kind = 'webp';
  return kind ? { kind, contentType: IMAGE_CONTENT_TYPES[kind] } : null;
}

type Dimensions = { width: number; height: number };

function dims(width: number, height: number): Dimensions | null {
  return width > 0 && height > 0 ? { width, height } : null;
}

function pngDimensions(b: Uint8Array): Dimensions | null {
  // IHDR must be the first chunk and is always exactly 13 bytes long; checking
  // both stops us reading width/height out of some unrelated chunk.
  if (b.length < 24 || !startsWith(b, PNG_SIGNATURE)) return null;
  if (u32be(b, 8) !== 13 || !ascii(b, 12, 'IHDR')) return null;
  const width = u32be(b, 16);
  const height = u32be(b, 20);
  // The PNG spec caps both at 2^31-1; larger values mean a corrupt header.
  if (width > 0x7fffffff || height > 0x7fffffff) return null;
  return dims(width, height);
}

function gifDimensions(b: Uint8Array): Dimensions | null {
  if (b.length < 10) return null;
  if (!ascii(b, 0, 'GIF87a') && !ascii(b, 0, 'GIF89a')) return null;
  return dims(u16le(b, 6), u16le(b, 8));
}

function webpDimensions(b: Uint8Array): Dimensions | null {
  if (b.length < 20 || !ascii(b, 0, 'RIFF') || !ascii(b, 8, 'WEBP')) return null;
  // Chunk payload starts at 20: RIFF header (12) + chunk fourcc (4) + size (4).
  if (ascii(b, 12, 'VP8 ')) {
    if (b.length < 30) return null;
    // Bit 0 of the frame tag is 0 for key frames; only key frames carry the
    // start code and dimensions.
    if ((u8(b, 20) & 0x01) !== 0) return null;
    if (u8(b, 23) !== 0x9d || u8(b, 24) !== 0x01 || u8(b, 25) !== 0x2a) return null;
    // The top two bits of each field are upscaling hints, not size.
    return dims(u16le(b, 26) & 0x3fff, u16le(b, 28) & 0x3fff);
  }
  if (ascii(b, 12, 'VP8L')) {
    if (b.length < 25 || u8(b, 20) !== 0x2f) return null;
    const b0 = u8(b, 21);
    const b1 = u8(b, 22);
    const b2 = u8(b, 23);
    const b3 = u8(b, 24);
    // The 3-bit version field must be 0; anything else is not a format we know.
    if (b3 >> 5 !== 0) return null;
    const width = 1 + (b0 | ((b1 & 0x3f) << 8));
    const height = 1 + ((b1 >> 6) | (b2 << 2) | ((b3 & 0x0f) << 10));
    return dims(width, height);
  }
  if (ascii(b, 12, 'VP8X')) {
    if (b.length < 30) return null;
    // Canvas size is stored minus one so it can never be zero.
    return dims(u24le(b, 24) + 1, u24le(b, 27) + 1);
  }
  return null;
}

function isSofMarker(m: number): boolean {
  // C4 (DHT), C8 (JPG extension) and CC (DAC) share the SOF range but are
  // table/reserved markers with a different payload layout.
  return m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;
}

function jpegDimensions(b: Uint8Array): Dimensions | null {
  if (b.length < 4 || u8(b, 0) !== 0xff || u8(b, 1) !== 0xd8) return null;
  let pos = 2;
  while (pos < b.length) {
    // Between segments only markers are allowed; stray data means corruption
    // and guessing past it could yield dimensions of an embedded thumbnail.
    if (u8(b, pos) !== 0xff) return null;
    // Any number of 0xFF fill bytes may precede a marker code.
    while (pos < b.length && u8(b, pos) === 0xff) pos++;
    if (pos >= b.length) return null;
    const marker = u8(b, pos);
    pos++;
    // FF00 is a stuffed data byte, never a marker at segment level.
    if (marker === 0x00) return null;
    // Standalone markers (TEM, RSTn, SOI) have no length field.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) continue;
    // EOI or start-of-scan before any SOF: no frame header to read.
    if (marker === 0xd9 || marker === 0xda) return null;
    if (pos + 2 > b.length) return null;
    const length = u16be(b, pos);
    // The length field counts itself, so anything below 2 would loop forever.
    if (length < 2) return null;
    if (isSofMarker(marker)) {
      // length(2) precision(1) height(2) width(2)
      if (length < 7 || pos + 7 > b.length) return null;
      // Height 0 defers to a DNL marker after the scan; we refuse to chase it.
      return dims(u16be(b, pos + 5), u16be(b, pos + 3));
    }
    pos += length;
  }
  return null;
}

export function imageDimensions(
  head: Uint8Array,
  kind: ImageKind,
): { width: number; height: number } | null {
  switch (kind) {
    case 'png':
      return pngDimensions(head);
    case 'gif':
      return gifDimensions(head);
    case 'webp':
      return webpDimensions(head);
    case 'jpeg':
      return jpegDimensions(head);
    default:
      return null;
  }
}

/**
 * Returns true when the image is small enough to process. Both a per-side cap
 * and a total-pixel cap are needed: a 1 x 10,000,000 strip passes the area
 * check but still breaks resizers that allocate per row or column.
 */
export function checkPixelFlood(width: number, height: number, maxSide = 20000): boolean {
  if (!Number.isSafeInteger(width) || !Number.isSafeInteger(height)) return false;
  if (width <= 0 || height <= 0) return false;
  if (width > maxSide || height > maxSide) return false;
  return width * height <= MAX_IMAGE_PIXELS;
}
