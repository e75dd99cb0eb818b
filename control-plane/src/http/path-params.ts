import type { Request } from 'express';
import { z } from 'zod';
import { notFound } from '../errors/app-error.ts';

/**
 * Uuid ids in a path (/v1/videos/{id}, /v1/webhooks/{id}...). A malformed id answers not_found exactly as an
 * unknown one does ("Video not-a-uuid was not found."): either way there is no such thing of the caller's,
 * and the database's uuid column never sees it. (The dashboard's DELETE /user/api-keys/{id} is the exception:
 * it refuses a malformed id as a 400 through parseParams.)
 */

const uuid = z.uuid();

/** The path parameter `name`, a uuid; `what` names the thing for not_found, e.g. 'Video' or 'Webhook endpoint'. */
export function uuidParam(req: Request, name: string, what: string): string {
  const value = String(req.params[name]);
  if (!uuid.safeParse(value).success) throw notFound(`${what} ${value}`);
  return value;
}

/** The OpenAPI description of a path parameter read by uuidParam: any string may be sent (a malformed one is a 404), format uuid. */
export const uuidPathField = (description: string) => z.string().meta({ description, format: 'uuid' });
