import { deflateSync, inflateSync } from "node:zlib";

/** A decoded 8-bit, non-interlaced RGB or RGBA PNG. */
export interface DecodedPng {
  width: number;
  height: number;
  /** 3 (RGB) or 4 (RGBA). */
  channels: 3 | 4;
  /** Row-major samples, `channels` bytes per pixel. */
  pixels: Uint8Array;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const CRC_TABLE = Array.from({ length: 256 }, (_, index) => {
  let value = index;
  for (let bit = 0; bit < 8; bit++) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
  return value >>> 0;
});

/** CRC-32 as PNG chunks use it. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (CRC_TABLE[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function paeth(left: number, up: number, upLeft: number): number {
  const estimate = left + up - upLeft;
  const toLeft = Math.abs(estimate - left);
  const toUp = Math.abs(estimate - up);
  const toUpLeft = Math.abs(estimate - upLeft);
  if (toLeft <= toUp && toLeft <= toUpLeft) return left;
  return toUp <= toUpLeft ? up : upLeft;
}

/** Decodes a PNG (8-bit RGB or RGBA, not interlaced); throws on anything else or on damage. */
export function decodePng(file: Uint8Array): DecodedPng {
  const buffer = Buffer.from(file);
  if (!buffer.subarray(0, 8).equals(SIGNATURE)) throw new Error("not a PNG: bad signature");
  let offset = 8;
  let header: { width: number; height: number; channels: 3 | 4 } | undefined;
  const data: Buffer[] = [];
  for (;;) {
    if (offset + 12 > buffer.length) throw new Error("truncated PNG: no IEND chunk");
    const length = buffer.readUInt32BE(offset);
    const type = buffer.toString("latin1", offset + 4, offset + 8);
    const body = buffer.subarray(offset + 8, offset + 8 + length);
    const crc = buffer.readUInt32BE(offset + 8 + length);
    if (crc32(buffer.subarray(offset + 4, offset + 8 + length)) !== crc) throw new Error(`bad CRC in ${type} chunk`);
    offset += 12 + length;
    if (type === "IHDR") {
      const [bitDepth, colorType, , , interlace] = body.subarray(8, 13);
      if (bitDepth !== 8 || (colorType !== 2 && colorType !== 6) || interlace !== 0) {
        throw new Error(`unsupported PNG: bit depth ${bitDepth}, colour type ${colorType}, interlace ${interlace}`);
      }
      header = { width: body.readUInt32BE(0), height: body.readUInt32BE(4), channels: colorType === 2 ? 3 : 4 };
    } else if (type === "IDAT") data.push(body);
    else if (type === "IEND") break;
  }
  if (!header) throw new Error("PNG without IHDR");
  const { width, height, channels } = header;
  const stride = width * channels;
  const raw = inflateSync(Buffer.concat(data));
  if (raw.length !== height * (stride + 1)) throw new Error(`PNG data is ${raw.length} bytes, expected ${height * (stride + 1)}`);
  const pixels = new Uint8Array(height * stride);
  for (let row = 0; row < height; row++) {
    const filter = raw[row * (stride + 1)];
    const source = row * (stride + 1) + 1;
    const target = row * stride;
    for (let column = 0; column < stride; column++) {
      const value = raw[source + column] ?? 0;
      const left = column >= channels ? (pixels[target + column - channels] ?? 0) : 0;
      const up = row > 0 ? (pixels[target - stride + column] ?? 0) : 0;
      const upLeft = row > 0 && column >= channels ? (pixels[target - stride + column - channels] ?? 0) : 0;
      let predicted: number;
      switch (filter) {
        case 0: predicted = 0; break;
        case 1: predicted = left; break;
        case 2: predicted = up; break;
        case 3: predicted = (left + up) >> 1; break;
        case 4: predicted = paeth(left, up, upLeft); break;
        default: throw new Error(`bad PNG filter ${filter} on row ${row}`);
      }
      pixels[target + column] = (value + predicted) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

function chunk(type: string, body: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(body.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), body])), 0);
  return Buffer.concat([head, body, crc]);
}

/** Encodes pixels as a PNG with the given filter per row (to test the decoder's filters). */
export function encodePng(image: DecodedPng, filterOfRow: (row: number) => 0 | 1 | 2 | 3 | 4): Buffer {
  const { width, height, channels, pixels } = image;
  const stride = width * channels;
  const raw = Buffer.alloc(height * (stride + 1));
  for (let row = 0; row < height; row++) {
    const filter = filterOfRow(row);
    raw[row * (stride + 1)] = filter;
    for (let column = 0; column < stride; column++) {
      const at = row * stride + column;
      const left = column >= channels ? (pixels[at - channels] ?? 0) : 0;
      const up = row > 0 ? (pixels[at - stride] ?? 0) : 0;
      const upLeft = row > 0 && column >= channels ? (pixels[at - stride - channels] ?? 0) : 0;
      const predicted = [0, left, up, (left + up) >> 1, paeth(left, up, upLeft)][filter] ?? 0;
      raw[row * (stride + 1) + 1 + column] = ((pixels[at] ?? 0) - predicted) & 0xff;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, channels === 3 ? 2 : 6, 0, 0, 0], 8);
  return Buffer.concat([SIGNATURE, chunk("IHDR", header), chunk("IDAT", deflateSync(raw)), chunk("IEND", new Uint8Array())]);
}
