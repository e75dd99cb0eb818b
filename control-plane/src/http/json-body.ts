import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { TextDecoder } from 'node:util';
import type { Request, RequestHandler } from 'express';

/**
 * The deepest nesting of arrays and objects any JSON a client sends may have. The deepest any endpoint takes is 6
 * (face.mouth of a create_video call's arguments, inside an MCP batch); 32 leaves room for clients that wrap, and
 * refuses a body built to be deep before anything walks it.
 */
const MAX_JSON_NESTING = 32;

/** A refusal of the body, in the shape body-parser's errors have (http/errors.ts classifies them by `type`). */
type BodyError = Error & { type: string; status: number; statusCode: number; expose: true };

const bodyError = (status: number, type: string, message: string): BodyError =>
  Object.assign(new Error(message), { type, status, statusCode: status, expose: true as const });

/** What requestBodyError (http/errors.ts) answers as nesting_too_deep. */
export const TOO_DEEP_TYPE = 'entity.too.deep';

const tooDeep = () =>
  bodyError(400, TOO_DEEP_TYPE, `The JSON nests arrays and objects more than ${MAX_JSON_NESTING} deep; no request of this service needs more.`);

/**
 * Counts the nesting of JSON text fed to it piece by piece, strings skipped. It reads no more than it is given and
 * keeps three numbers, so a body is refused at the first bracket past the limit, before the rest has arrived.
 */
class NestingCounter {
  private depth = 0;
  private inString = false;
  private escaped = false;

  /** False once the text so far nests deeper than MAX_JSON_NESTING. */
  push(text: string): boolean {
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (code === 0x5c) this.escaped = true;
        else if (code === 0x22) this.inString = false;
      } else if (code === 0x22) {
        this.inString = true;
      } else if (code === 0x5b || code === 0x7b) {
        if (++this.depth > MAX_JSON_NESTING) return false;
      } else if (code === 0x5d || code === 0x7d) {
        this.depth--;
      }
    }
    return true;
  }
}

/**
 * JSON.parse for text a client sent outside a request body (a form field, a websocket message): refused with the
 * body's error past MAX_JSON_NESTING, before it is parsed.
 */
export function parseClientJson(text: string): unknown {
  if (!new NestingCounter().push(text)) throw tooDeep();
  return JSON.parse(text);
}

function decompressed(req: Request): Readable | BodyError {
  const encoding = (req.get('content-encoding') ?? 'identity').toLowerCase();
  switch (encoding) {
    case 'identity':
      return req;
    case 'gzip':
      return req.pipe(createGunzip());
    case 'deflate':
      return req.pipe(createInflate());
    case 'br':
      return req.pipe(createBrotliDecompress());
    default:
      return bodyError(415, 'encoding.unsupported', `unsupported content encoding "${encoding}"`);
  }
}

function textDecoder(req: Request): TextDecoder | BodyError {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(req.get('content-type') ?? '')?.[1]?.toLowerCase() ?? 'utf-8';
  const unsupported = bodyError(415, 'charset.unsupported', `unsupported charset "${charset.toUpperCase()}"`);
  // RFC 8259 §8.1: JSON is Unicode; body-parser took any utf-* label, as this does.
  if (!charset.startsWith('utf-')) return unsupported;
  try {
    return new TextDecoder(charset);
  } catch {
    return unsupported;
  }
}

/** body-parser's strict mode: the text must be an object or an array; an empty body is an empty object. */
function parseStrict(text: string): unknown {
  const first = /^[ \t\n\r]*(.?)/.exec(text)?.[1] ?? '';
  if (first === '') return {};
  if (first !== '{' && first !== '[') throw new SyntaxError(`Unexpected token '${first}': a JSON body is an object or an array`);
  return JSON.parse(text);
}

/**
 * The JSON body parser of every surface (the app, OAuth, MCP, the control socket), in place of express.json: the
 * same media type (application/json), charsets (utf-*), Content-Encodings (gzip, deflate, br), empty-body and
 * strict rules and error types, plus the nesting limit, counted while the body streams in. A body nested past
 * MAX_JSON_NESTING is refused at the bracket that passes it, whatever its size (the piece that holds that bracket
 * is the most that is read); nothing deep is ever parsed or walked. A body past `limitKb` is refused as it passes it (413).
 */
export function jsonBody(limitKb: number): RequestHandler {
  const limit = limitKb * 1024;
  return (req, res, next) => {
    const hasBody = req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number.parseInt(req.headers['content-length'] ?? '', 10));
    if (req.readableEnded || !hasBody || !req.is('application/json')) {
      next();
      return;
    }
    const decoder = textDecoder(req);
    const source = decoder instanceof TextDecoder ? decompressed(req) : decoder;
    if (!(decoder instanceof TextDecoder) || !('on' in source)) {
      next(decoder instanceof TextDecoder ? source : decoder);
      return;
    }

    const counter = new NestingCounter();
    const parts: string[] = [];
    let received = 0;
    let settled = false;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      source.off('data', onData).off('end', onEnd).off('error', onError);
      req.off('close', onClose);
      if (error === undefined) {
        next();
        return;
      }
      if (source !== req) {
        // A decompressor may still hold input; whatever it would say now is heard by no one.
        req.unpipe();
        source.on('error', () => {}).destroy();
      }
      if (!req.complete) {
        // The rest is not worth reading: discard what still arrives and close the connection after the answer.
        res.setHeader('Connection', 'close');
        req.resume();
      }
      next(error);
    };
    const onData = (chunk: Buffer) => {
      // Counted before the size: a deep body is refused as such at its 33rd bracket, however long it is.
      const text = decoder.decode(chunk, { stream: true });
      if (!counter.push(text)) {
        settle(tooDeep());
        return;
      }
      received += chunk.length;
      if (received > limit) {
        settle(bodyError(413, 'entity.too.large', 'request entity too large'));
        return;
      }
      parts.push(text);
    };
    const onEnd = () => {
      parts.push(decoder.decode());
      try {
        req.body = parseStrict(parts.join(''));
      } catch (error) {
        settle(bodyError(400, 'entity.parse.failed', (error as Error).message));
        return;
      }
      settle();
    };
    const onError = () => {
      settle(source === req ? bodyError(400, 'request.aborted', 'request aborted') : bodyError(400, 'encoding.invalid', `The body is not valid ${req.get('content-encoding')} data.`));
    };
    const onClose = () => {
      if (!req.complete) settle(bodyError(400, 'request.aborted', 'request aborted'));
    };
    source.on('data', onData).on('end', onEnd).on('error', onError);
    req.on('close', onClose);
  };
}
