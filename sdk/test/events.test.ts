import { describe, expect, it } from 'vitest';
import { serverSentEvents } from '../src/events.ts';

/** A body that arrives in the given chunks, as a network would split it. */
function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function parse(chunks: string[]) {
  const retries: number[] = [];
  const events = [];
  for await (const event of serverSentEvents(streamOf(chunks), (ms) => retries.push(ms))) events.push(event);
  return { events, retries };
}

describe('serverSentEvents', () => {
  it('parses events split anywhere across chunks, with CRLF, CR and LF line ends, comments and multi-line data', async () => {
    const { events, retries } = await parse(['retry: 3000\n\n: heart', 'beat\r\n\r\nid: 7\r', '\nevent: video.status\ndata: {"a":\ndata:1}\n', '\nid: 8\revent: video.status\rdata:  two\r\r']);
    expect(retries).toEqual([3000]);
    expect(events).toEqual([
      { event: 'video.status', data: '{"a":\n1}', id: '7' },
      { event: 'video.status', data: ' two', id: '8' },
    ]);
  });

  it('dispatches nothing without data, names an unnamed event "message", and carries the last id over', async () => {
    const { events } = await parse(['id: 3\nevent: ignored\n\ndata: x\n\n', 'data: unterminated']);
    expect(events).toEqual([{ event: 'message', data: 'x', id: '3' }]);
  });
});
