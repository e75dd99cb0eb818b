/**
 * Reads ModelProto.metadata_props (field 14) without decoding the graph: onnxruntime-node
 * does not expose custom metadata, and a model with a symbolic face size documents S there.
 */
export function readOnnxMetadata(bytes: Uint8Array): Record<string, string> {
  const result: Record<string, string> = {};
  let offset = 0;

  const varint = (): number => {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (offset >= bytes.length) throw new Error('truncated varint');
      const byte = bytes[offset++]!;
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
  };

  const readEntry = (end: number): void => {
    let key = '';
    let value = '';
    while (offset < end) {
      const tag = varint();
      const length = varint();
      const text = Buffer.from(bytes.buffer, bytes.byteOffset + offset, length).toString('utf8');
      offset += length;
      if (tag >> 3 === 1) key = text;
      else if (tag >> 3 === 2) value = text;
    }
    if (key) result[key] = value;
  };

  try {
    while (offset < bytes.length) {
      const tag = varint();
      const field = tag >> 3;
      const wire = tag & 7;
      if (wire === 0) varint();
      else if (wire === 1) offset += 8;
      else if (wire === 5) offset += 4;
      else if (wire === 2) {
        const length = varint();
        const end = offset + length;
        if (field === 14) readEntry(end);
        offset = end;
      } else break;
    }
  } catch {
    // Metadata is optional; a model onnxruntime can load but this reader cannot walk simply has none.
  }
  return result;
}
