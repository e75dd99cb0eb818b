import type { RequestHandler, Response } from 'express';
import type { User } from '../../db/schema.ts';
import { AppError } from '../../errors/app-error.ts';
import { InvalidIdToken, type IdentityService } from '../../services/identity.service.ts';
import { bearerToken } from './api-auth.ts';

const CHALLENGE = 'Bearer realm="petsing"';

/**
 * Web-app endpoints: the caller signs in with an identity-provider ID token (Authorization: Bearer <JWT>).
 * The account is created on the first request (IdentityService.signIn); API keys and OAuth tokens are
 * for /v1 and /mcp and are refused here.
 */
export function requireWebUser(identity: IdentityService): RequestHandler {
  return async (req, res, next) => {
    const token = bearerToken(req);
    if (!token) {
      throw new AppError('unauthorized', 'No ID token was sent.', {
        hint: 'Sign in on the web site and send Authorization: Bearer <ID token>.',
        headers: { 'WWW-Authenticate': CHALLENGE },
      });
    }
    try {
      res.locals.webUser = await identity.signIn(token);
    } catch (error) {
      if (!(error instanceof InvalidIdToken)) throw error;
      throw new AppError('unauthorized', error.message, {
        hint: 'Sign in again to get a fresh ID token from the identity provider.',
        headers: { 'WWW-Authenticate': `${CHALLENGE}, error="invalid_token"` },
      });
    }
    next();
  };
}

export function webUserOf(res: Response): User {
  const user = res.locals.webUser as User | undefined;
  if (!user) throw new Error('webUserOf called on a route without requireWebUser');
  return user;
}
