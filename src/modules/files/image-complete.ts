import type { ImageKind } from './image-sniff.ts';

const PNG_IEND = [0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82];

function endsWith(tail: Uint8Array, bytes: readonly number[]): boolean {
  if (tail.length < bytes.length) return false;
  const off = tail.length - bytes.length;
  return bytes.every((b, i) => tail[off + i] === b);
}

/**
 * Whether an image of `size` bytes reaches its format's end marker, i.e. was not cut short:
 * PNG ends with the IEND chunk, GIF with its 0x3B trailer, JPEG has an EOI marker near the end
 * (some writers pad after it), and a WebP file is at least as long as its RIFF header says.
 * `tail` holds the last bytes of the file (64 are plenty), `head` the first ones.
 */
export function imageLooksComplete(kind: ImageKind, head: Uint8Array, tail: Uint8Array, size: number): boolean {
  switch (kind) {
    case 'png':
      return endsWith(tail, PNG_IEND);
    case 'gif':
      return tail[tail.length - 1] === 0x3b;
    case 'jpeg': {
      for (let i = tail.length - 2; i >= 0; i--) if (tail[i] === 0xff && tail[i + 1] === 0xd9) return true;
      return false;
    }
    case 'webp': {
      if (head.length < 8) return false;
      const riffSize = ((head[4] ?? 0) | ((head[5] ?? 0) << 8) | ((head[6] ?? 0) << 16) | ((head[7] ?? 0) << 24)) >>> 0;
      return size >= riffSize + 8;
    }
    default:
      return false;
  }
}
