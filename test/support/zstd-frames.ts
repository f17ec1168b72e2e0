// The frames of a zstd stream, counted from their headers and block headers (RFC 8878,
// section 3.1.1): how many frames an answer was sent as, which its decoded text cannot say.

/** The number of frames in `b`, which must be whole zstd frames one after the other (skippable frames too). */
export function zstdFrameCount(b: Buffer): number {
  let at = 0;
  let frames = 0;
  while (at < b.length) {
    const magic = b.readUInt32LE(at);
    frames++;
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      at += 8 + b.readUInt32LE(at + 4);
      continue;
    }
    if (magic !== 0xfd2fb528) throw new Error(`no zstd frame at byte ${at}`);
    const descriptor = b[at + 4]!;
    const fcsFlag = descriptor >> 6;
    const singleSegment = (descriptor >> 5) & 1;
    const checksum = (descriptor >> 2) & 1;
    const dictionaryBytes = [0, 1, 2, 4][descriptor & 3]!;
    const fcsBytes = fcsFlag === 0 ? singleSegment : [1, 2, 4, 8][fcsFlag]!;
    at += 5 + (singleSegment ? 0 : 1) + dictionaryBytes + fcsBytes;
    for (let last = 0; !last; ) {
      const head = b.readUIntLE(at, 3);
      last = head & 1;
      const type = (head >> 1) & 3;
      const size = head >> 3;
      at += 3 + (type === 1 ? 1 : size);
    }
    at += checksum ? 4 : 0;
  }
  if (at !== b.length) throw new Error('a zstd frame cut short');
  return frames;
}
