/**
 * Reads the deployment zips osls writes (stored or deflated entries, no zip64: a function zip is a few
 * MB), so the tests can weigh and load exactly what would be uploaded.
 */
import { readFile } from 'node:fs/promises';
import { inflateRawSync } from 'node:zlib';

export interface ZipEntry {
  name: string;
  /** Uncompressed size. */
  size: number;
  data(): Buffer;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;

export async function readZip(file: string): Promise<Map<string, ZipEntry>> {
  const zip = await readFile(file);
  // The end record is the last 22 bytes plus a comment of up to 64 KiB.
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === END_OF_CENTRAL_DIRECTORY) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error(`${file}: not a zip file (no end of central directory record)`);
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const entries = new Map<string, ZipEntry>();
  for (let n = 0; n < count; n++) {
    if (zip.readUInt32LE(at) !== CENTRAL_DIRECTORY_ENTRY)
      throw new Error(`${file}: corrupt central directory at byte ${at}`);
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const localHeader = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    entries.set(name, {
      name,
      size,
      data() {
        if (zip.readUInt32LE(localHeader) !== LOCAL_FILE_HEADER)
          throw new Error(`${file}: ${name}: corrupt local header`);
        const start = localHeader + 30 + zip.readUInt16LE(localHeader + 26) + zip.readUInt16LE(localHeader + 28);
        const raw = zip.subarray(start, start + compressedSize);
        if (method === 0) return Buffer.from(raw);
        if (method === 8) return inflateRawSync(raw);
        throw new Error(`${file}: ${name}: unsupported compression method ${method}`);
      },
    });
  }
  return entries;
}
