import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { ObjectNotFoundError } from '@petsing/platform/storage';
import { z } from 'zod';
import { AppError, errorCatalog, type ErrorCode } from '../errors/app-error.ts';
import type { Logger } from '../logging/logger.ts';
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
