import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { ObjectNotFoundError } from '@petsing/platform/storage';
import { z } from 'zod';
import { AppError, errorCatalog, type ErrorCode } from '../errors/app-error.ts';
import type { Logger } from '../logging/logger.ts';
import { TOO_DEEP_TYPE } from './json-body.ts';
import { logRequestFailure } from './request-logging.ts';
import type { ErrorResponseBody } from './schemas/common.schemas.ts';

function errorDocumentationUrl(baseUrl: string, code: string): string {
  return `${baseUrl}/docs/errors#${code}`;
}

export function errorBody(baseUrl: string, error: AppError): ErrorResponseBody {
  return {
    error: {
      code: error.code,
      message: error.message,
      status: error.status,
      hint: error.hint,
      documentation_url: errorDocumentationUrl(baseUrl, error.code),
      retryable: error.retryable,
      ...(error.retryAfterSeconds !== undefined ? { retry_after_seconds: error.retryAfterSeconds } : {}),
      ...error.details,
    },
    message: error.message,
  };
}

function sendError(res: Response, baseUrl: string, error: AppError): void {
  res.set(error.headers);
  res.status(error.status).json(errorBody(baseUrl, error));
}

/** Turns a zod failure into one readable sentence naming each offending field. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'body'}: ${issue.message}`)
    .join('; ');
}

/**
 * Requests no route answered: 405 with Allow where the path exists for other methods (`allowedMethods`,
 * from /openapi.json), else 404.
 */
export function notFoundHandler(allowedMethods: (path: string) => string[] | undefined = () => undefined): RequestHandler {
  return (req, _res, next) => {
    const allowed = allowedMethods(req.path);
    if (allowed && allowed.length > 0 && !allowed.includes(req.method)) {
      next(new AppError('method_not_allowed', `${req.method} is not supported on ${req.path}; use ${allowed.join(', ')}.`, { headers: { Allow: allowed.join(', ') } }));
      return;
    }
    next(new AppError('not_found', `No route for ${req.method} ${req.path}.`, { hint: 'See /openapi.json for the available endpoints.' }));
  };
}

type BodyParserError = Error & { type?: string; status?: number; expose?: boolean };

/** The one place where every error becomes JSON in the shared shape. Stack traces never leave the process. */
export function errorHandler(baseUrl: string, logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const appError = toAppError(error);
    if (appError.status >= 500) logRequestFailure(logger, req, res, error);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendError(res, baseUrl, appError);
  };
}

/**
 * What Node's HTTP parser refuses before Express sees a request (the server's 'clientError'), as the AppError it
 * is answered as: headers past maxHeaderSize (16 KB; a long URL counts, so there is no separate 414) are 431, a
 * request not sent in time 408, chunk extensions past their limit 413, anything else that is not HTTP 400.
 */
function parserRefusal(code: string | undefined): AppError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError('headers_too_large', 'The request line and headers are larger than 16 KB.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('request_timeout', 'The request was not received in time.');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new AppError('payload_too_large', 'The chunk extensions of the request body are too large.');
    default:
      return new AppError('invalid_request', 'The request is not valid HTTP/1.1.', { hint: 'Send a well-formed HTTP/1.1 request: request line, headers, then the body its Content-Length or chunked encoding announces.' });
  }
}

/**
 * The server's 'clientError' handler: Node's own answer to a request its parser refused is a bare status line;
 * this one is the shared JSON error body, as every other answer is. Nothing is written on a connection that is
 * gone or already carries a response.
 */
export function answerClientError(baseUrl: string): (error: Error & { code?: string }, socket: Duplex) => void {
  return (error, socket) => {
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const refusal = parserRefusal(error.code);
    const body = JSON.stringify(errorBody(baseUrl, refusal));
    socket.end(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
  };
}

/** Any thrown value as the AppError it is answered as (internal_error for the unexpected). */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof ObjectNotFoundError) return new AppError('not_found', 'The requested file was not found.');
  if (error instanceof z.ZodError) return new AppError('invalid_request', describeZodError(error));
  // The router decodes path parameters and throws a URIError on malformed percent-encoding (%ZZ).
  if (error instanceof URIError) return new AppError('invalid_path', 'The path is not validly percent-encoded.');
  return requestBodyError(error) ?? new AppError('internal_error', errorCatalog.internal_error.title + '.');
}

/**
 * What a body parser's failure means for the client (bad JSON, too large, unsupported charset or encoding,
 * too many form fields), or undefined for any other error. Endpoints with their own wire format (OAuth,
 * MCP) answer the same classification in their shape.
 */
export function requestBodyError(error: unknown): AppError | undefined {
  const parserError = error as BodyParserError;
  switch (parserError?.type) {
    case 'entity.parse.failed':
      return new AppError('malformed_json', 'The request body is not valid JSON.');
    case TOO_DEEP_TYPE:
      return new AppError('nesting_too_deep', parserError.message);
    case 'entity.too.large':
      return new AppError('payload_too_large', 'The request body is larger than this endpoint accepts.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('invalid_request', parserError.message, { status: 415 });
  }
  if (typeof parserError?.status === 'number' && parserError.status >= 400 && parserError.status < 500 && parserError.expose) {
    const code: ErrorCode = parserError.status === 413 ? 'payload_too_large' : 'invalid_request';
    return new AppError(code, parserError.message, { status: parserError.status });
  }
  return undefined;
}
