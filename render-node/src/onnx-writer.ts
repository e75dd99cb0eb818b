/**
 * A minimal ONNX (protobuf) writer: just the messages a small generated graph needs.
 * Field numbers follow onnx/onnx.proto3; hand-encoding keeps the output byte-for-byte
 * deterministic and avoids a schema-compilation step.
 */

class ProtoWriter {
  private readonly chunks: Buffer[] = [];

  private varint(value: number | bigint): void {
    let v = BigInt.asUintN(64, BigInt(value));
    const bytes: number[] = [];
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v !== 0n) byte |= 0x80;
      bytes.push(byte);
    } while (v !== 0n);
    this.chunks.push(Buffer.from(bytes));
  }

  private tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  int(field: number, value: number): this {
    this.tag(field, 0);
    this.varint(value);
    return this;
  }

  float(field: number, value: number): this {
    this.tag(field, 5);
    const buffer = Buffer.alloc(4);
    buffer.writeFloatLE(value);
    this.chunks.push(buffer);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, 2);
    this.varint(value.length);
    this.chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, Buffer.from(value, 'utf8'));
  }

  message(field: number, build: (writer: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  finish(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

const TensorType = { FLOAT: 1, INT64: 7 } as const;

export interface OnnxTensor {
  name: string;
  dims: number[];
  type: (typeof TensorType)[keyof typeof TensorType];
  /** Little-endian raw bytes, as ONNX stores raw_data. */
  raw: Uint8Array;
}

type OnnxAttribute =
  | { name: string; kind: 'int'; value: number }
  | { name: string; kind: 'ints'; value: number[] }
  | { name: string; kind: 'float'; value: number };

interface OnnxNode {
  op: string;
  inputs: string[];
  outputs: string[];
  attributes?: OnnxAttribute[];
}

export interface OnnxValueInfo {
  name: string;
  /** A number is a fixed dimension, a string a symbolic one (e.g. 'N'). */
  shape: Array<number | string>;
}

export interface OnnxModel {
  graphName: string;
  producer: string;
  opset: number;
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
  initializers: OnnxTensor[];
  nodes: OnnxNode[];
  metadata: Record<string, string>;
  docString?: string;
}

export function floatTensor(name: string, dims: number[], values: ArrayLike<number>): OnnxTensor {
  const data = Float32Array.from(values);
  const expected = dims.reduce((a, b) => a * b, 1);
  if (data.length !== expected) throw new Error(`tensor ${name}: ${data.length} values for dims ${dims.join('x')}`);
  return { name, dims, type: TensorType.FLOAT, raw: new Uint8Array(data.buffer) };
}

export function int64Tensor(name: string, values: number[]): OnnxTensor {
  return { name, dims: [values.length], type: TensorType.INT64, raw: new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer) };
}

function writeValueInfo(writer: ProtoWriter, info: OnnxValueInfo): void {
  writer.string(1, info.name);
  writer.message(2, (type) =>
    type.message(1, (tensorType) => {
      tensorType.int(1, TensorType.FLOAT);
      tensorType.message(2, (shape) => {
        for (const dim of info.shape) {
          shape.message(1, (d) => (typeof dim === 'number' ? d.int(1, dim) : d.string(2, dim)));
        }
      });
    }),
  );
}

function writeTensor(writer: ProtoWriter, tensor: OnnxTensor): void {
  for (const dim of tensor.dims) writer.int(1, dim);
  writer.int(2, tensor.type);
  writer.string(8, tensor.name);
  writer.bytes(9, tensor.raw);
}

function writeAttribute(writer: ProtoWriter, attribute: OnnxAttribute): void {
  writer.string(1, attribute.name);
  if (attribute.kind === 'int') writer.int(3, attribute.value).int(20, 2);
  else if (attribute.kind === 'float') writer.float(2, attribute.value).int(20, 1);
  else {
    for (const value of attribute.value) writer.int(8, value);
    writer.int(20, 7);
  }
}

export function encodeOnnxModel(model: OnnxModel): Buffer {
  const writer = new ProtoWriter();
  writer.int(1, 8); // ir_version 8: understood by every onnxruntime since 1.10
  writer.string(2, model.producer);
  writer.string(3, '1');
  if (model.docString) writer.string(6, model.docString);
  writer.message(7, (graph) => {
    model.nodes.forEach((node, index) =>
      graph.message(1, (n) => {
        for (const input of node.inputs) n.string(1, input);
        for (const output of node.outputs) n.string(2, output);
        n.string(3, `${node.op.toLowerCase()}_${index}`);
        n.string(4, node.op);
        for (const attribute of node.attributes ?? []) n.message(5, (a) => writeAttribute(a, attribute));
      }),
    );
    graph.string(2, model.graphName);
    for (const tensor of model.initializers) graph.message(5, (t) => writeTensor(t, tensor));
    for (const input of model.inputs) graph.message(11, (v) => writeValueInfo(v, input));
    for (const output of model.outputs) graph.message(12, (v) => writeValueInfo(v, output));
  });
  writer.message(8, (opset) => opset.string(1, '').int(2, model.opset));
  for (const [key, value] of Object.entries(model.metadata).sort(([a], [b]) => a.localeCompare(b))) {
    writer.message(14, (entry) => entry.string(1, key).string(2, value));
  }
  return writer.finish();
}
