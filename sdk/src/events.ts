/** One event of a text/event-stream (the fields the WHATWG HTML "server-sent events" section defines). */
export type ServerSentEvent = { event: string; data: string; id?: string };

/**
 * The events of a text/event-stream body, parsed as the HTML standard's EventSource does: lines end in LF,
 * CRLF or CR; `field: value` (one space after the colon dropped); lines starting with a colon are comments;
 * a blank line dispatches the event (without data, nothing is dispatched); the last event id carries over to
 * later events. A `retry` field (the reconnection delay, ms) goes to `onRetry` as soon as it is read.
 */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>, onRetry: (ms: number) => void = () => {}): AsyncGenerator<ServerSentEvent> {
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (let done = false; !done; ) {
      const read = await reader.read();
      done = read.done;
      buffer += read.value ?? '';
      let end: RegExpExecArray | null;
      while ((end = /\r\n|\r|\n/.exec(buffer)) !== null) {
        // A CR at the very end may be the first half of a CRLF still on its way (unless the stream is over).
        if (!done && end[0] === '\r' && end.index === buffer.length - 1) break;
        const line = buffer.slice(0, end.index);
        buffer = buffer.slice(end.index + end[0].length);
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), ...(id !== undefined ? { id } : {}) };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const rawValue = colon < 0 ? '' : line.slice(colon + 1);
        const fieldValue = rawValue.startsWith(' ') ? rawValue.slice(1) : rawValue;
        if (field === 'event') event = fieldValue;
        else if (field === 'data') data.push(fieldValue);
        else if (field === 'id' && !fieldValue.includes('\0')) id = fieldValue;
        else if (field === 'retry' && /^\d+$/.test(fieldValue)) onRetry(Number(fieldValue));
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
