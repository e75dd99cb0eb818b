import type { Request } from 'express';
import type { z } from 'zod';
import { AppError } from '../errors/app-error.ts';
import { describeZodError } from './errors.ts';

/** Hints for refusals of particular top-level fields, used instead of the generic one when that field is at fault. */
export type FieldHints = Partial<Record<string, string>>;

function parseWith<Schema extends z.ZodType>(schema: Schema, value: unknown, where: string, hints: FieldHints = {}): z.infer<Schema> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const field = result.error.issues.map((issue) => String(issue.path[0])).find((name) => hints[name] !== undefined);
    const hint = field === undefined ? undefined : hints[field];
    throw new AppError('invalid_request', `Invalid ${where}: ${describeZodError(result.error)}.`, hint ? { hint } : {});
  }
  return result.data;
}

export const parseBody = <Schema extends z.ZodType>(schema: Schema, req: Request, hints?: FieldHints) => parseWith(schema, req.body ?? {}, 'request body', hints);
export const parseQuery = <Schema extends z.ZodType>(schema: Schema, req: Request) => parseWith(schema, req.query, 'query');
export const parseParams = <Schema extends z.ZodType>(schema: Schema, req: Request) => parseWith(schema, req.params, 'path');
