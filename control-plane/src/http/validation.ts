import type { Request } from 'express';
import type { z } from 'zod';
import { AppError } from '../errors/app-error.ts';
import { describeZodError } from './errors.ts';

function parseWith<Schema extends z.ZodType>(schema: Schema, value: unknown, where: string): z.infer<Schema> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new AppError('invalid_request', `Invalid ${where}: ${describeZodError(result.error)}.`);
  }
  return result.data;
}

export const parseBody = <Schema extends z.ZodType>(schema: Schema, req: Request) => parseWith(schema, req.body ?? {}, 'request body');
export const parseQuery = <Schema extends z.ZodType>(schema: Schema, req: Request) => parseWith(schema, req.query, 'query');
export const parseParams = <Schema extends z.ZodType>(schema: Schema, req: Request) => parseWith(schema, req.params, 'path');
