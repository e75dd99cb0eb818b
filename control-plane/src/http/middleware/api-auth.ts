import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Scope } from '../../db/schema.ts';
import { AppError } from '../../errors/app-error.ts';
import type { ApiCredential } from '../../services/api-key.service.ts';

export type CredentialVerifier = (token: string) => Promise<ApiCredential | undefined>;

export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Authenticates /v1 (and /mcp) callers with an API key or an OAuth access token. The challenge points
 * at the protected-resource metadata (RFC 9728) so OAuth clients can discover how to sign in.
 */
export function requireApiCredential(verify: CredentialVerifier, baseUrl: string): RequestHandler {
  const challenge = `Bearer resource_metadata="${baseUrl}/.well-known/oauth-protected-resource"`;
  return async (req: Request, res: Response, next: NextFunction) => {
    const token = bearerToken(req);
    const credential = token ? await verify(token) : undefined;
    if (!credential) {
      const reason = token ? 'The credential is invalid, revoked or expired.' : 'No credential was sent.';
      next(
        new AppError('unauthorized', reason, {
          headers: { 'WWW-Authenticate': token ? `${challenge}, error="invalid_token"` : challenge },
        }),
      );
      return;
    }
    res.locals.credential = credential;
    next();
  };
}

export function credentialOf(res: Response): ApiCredential {
  const credential = res.locals.credential as ApiCredential | undefined;
  if (!credential) throw new Error('credentialOf called on a route without requireApiCredential');
  return credential;
}

export function requireScope(scope: Scope): RequestHandler {
  return (_req, res, next) => {
    if (!credentialOf(res).scopes.includes(scope)) {
      next(new AppError('forbidden', `This credential lacks the ${scope} scope.`, {
        hint: `Use an API key or OAuth token that carries ${scope}.`,
      }));
      return;
    }
    next();
  };
}
