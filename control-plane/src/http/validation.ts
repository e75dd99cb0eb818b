import type { Request } from 'express';
import type { z } from 'zod';
import { AppError } from '../errors/app-error.ts';
import { findInvalidText, INVALID_TEXT_MESSAGE } from '../services/text.ts';
import { describeZodError } from './errors.ts';

/** Largest JSON request body, in kB (the app's parser, and /mcp's own). */
export const JSON_BODY_LIMIT_KB = 100;

/** Hints for refusals of particular top-level fields, used instead of the generic one when that field is at fault. */
export type FieldHints = Partial<Record<string, string>>;

function parseWith<Schema extends z.ZodType>(schema: Schema, value: unknown, where: string, hints: FieldHints = {}): z.infer<Schema> {
  // The text rule first, over everything sent (fields the schema would strip included), so a refusal names the
  // offending field whatever else is wrong with the request.
  const badText = findInvalidText(value);
  if (badText) {
    const field = badText.length > 0 ? badText.join('.') : where;
    const hint = hints[String(badText[0])];
    throw new AppError('invalid_request', `Invalid ${where}: ${field}: ${INVALID_TEXT_MESSAGE}.`, hint ? { hint } : {});
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    const field = result.error.issues.map((issue) => String(issue.path[0])).find((name) => hints[name] !== undefined);
    const hint = field === undefined ? undefined : hints[field];
    throw new AppError('invalid_request', `Invalid ${where}: ${describeZodError(result.error)}.`, hint ? { hint } : {});
  }
  return result.data;
}

/** An operator command's arguments (the CLI, in process or over the control socket), refused as /v1 refuses a body. */
export const parseCommandArguments = <Schema extends z.ZodType>(schema: Schema, args: unknown) => parseWith(schema, args, 'arguments');
/** MCP tool arguments, refused as /v1 refuses a body: invalid_request naming each field, with the same field hints. */
export const parseToolArguments = <Schema extends z.ZodType>(schema: Schema, args: unknown, hints?: FieldHints) => parseWith(schema, args, 'arguments', hints);
export const parseBody = <Schema extends z.ZodType>(schema: Schema, req: Request, hints?: FieldHints) => parseWith(schema, req.body ?? {}, 'request body', hints);
export const parseQuery = <Schema extends z.ZodType>(schema: Schema, req: Request) => parseWith(schema, req.query, 'query');
export const parseParams = <Schema extends z.ZodType>(schema: Schema, req: Request) => parseWith(schema, req.params, 'path');
