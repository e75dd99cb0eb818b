import { connect, constants, createServer, type ClientHttp2Session, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';

const { HTTP2_HEADER_PATH, HTTP2_HEADER_STATUS } = constants;
/** Pseudo-headers the upstream session sets itself. */
const SESSION_HEADERS = new Set([':authority', ':scheme']);

export type StallingProxy = {
  address: string;
  /** From now on, calls of these gRPC methods (their last path segment, "StartWorkflowExecution") get no answer; every other call passes. */
  stall(...methods: string[]): void;
  close(): Promise<void>;
};

/**
 * An HTTP/2 (gRPC, cleartext) proxy in front of Temporal that can stop answering chosen methods while every other
 * call goes through: as when the server hangs on some requests, or the network breaks in the middle of a request
 * after an earlier one went through.
 */
export async function startStallingProxy(target: string): Promise<StallingProxy> {
  const stalled = new Set<string>();
  const held: ServerHttp2Stream[] = [];
  let upstream: ClientHttp2Session | undefined;
  const session = () => {
    if (!upstream || upstream.closed || upstream.destroyed) {
      upstream = connect(`http://${target}`);
      upstream.on('error', () => {});
    }
    return upstream;
  };
  const server: Http2Server = createServer();
  server.on('stream', (stream, headers) => {
    const path = String(headers[HTTP2_HEADER_PATH] ?? '');
    if (stalled.has(path.slice(path.lastIndexOf('/') + 1))) {
      held.push(stream);
      stream.on('error', () => {});
      return;
    }
    forward(session(), stream, headers);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as { port: number }).port}`,
    stall: (...methods) => {
      for (const method of methods) stalled.add(method);
    },
    close: async () => {
      for (const stream of held) stream.destroy();
      upstream?.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One call passed through: its headers, body and trailers each way. */
function forward(upstream: ClientHttp2Session, stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
  const request = upstream.request(Object.fromEntries(Object.entries(headers).filter(([name]) => !SESSION_HEADERS.has(name))));
  let trailers: IncomingHttpHeaders = {};
  const fail = () => {
    if (!stream.destroyed) stream.close(constants.NGHTTP2_INTERNAL_ERROR);
  };
  request.on('error', fail);
  stream.on('error', () => request.close(constants.NGHTTP2_CANCEL));
  stream.pipe(request);
  request.on('response', (responseHeaders) => {
    if (stream.destroyed) return;
    // A trailers-only answer (a gRPC error): its status is in these headers, and nothing follows.
    if ('grpc-status' in responseHeaders) {
      stream.respond(responseHeaders, { endStream: true });
      return;
    }
    stream.respond({ ...responseHeaders, [HTTP2_HEADER_STATUS]: responseHeaders[HTTP2_HEADER_STATUS] }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    request.pipe(stream);
  });
  request.on('trailers', (received) => (trailers = received));
}
