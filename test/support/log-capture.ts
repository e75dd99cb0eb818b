import { Writable } from 'node:stream';

/** A stream that keeps every chunk written to it as a line, for asserting on what a logger wrote. */
export function captureLines(): { lines: string[]; sink: Writable } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, sink };
}
