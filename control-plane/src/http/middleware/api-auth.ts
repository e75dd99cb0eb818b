import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Scope } from '../../domain/scopes.ts';
import { AppError } from '../../errors/app-error.ts';
import type { ApiCredential } from '../../services/api-credential.ts';

export type CredentialVerifier = (token: string) => Promise<ApiCredential | undefined>;

export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Resolves the bearer credential (API key or OAuth access token), if any, without refusing yet: the
 * rate limiter runs next and counts anonymous callers by address, so guessing keys is throttled too.
 */
export function identifyApiCredential(verify: CredentialVerifier): RequestHandler {
  return async (req, res, next) => {
    const token = bearerToken(req);
    res.locals.bearerPresented = token !== undefined;
    if (token) res.locals.credential = await verify(token);
    next();
  };
}

/**
 * Refuses callers without a usable credential. The challenge points at the protected-resource metadata
 * (RFC 9728) of this resource so OAuth clients can discover how to sign in, and for which resource.
 * `refusedHint` tells a caller whose credential was refused what to use instead.
 */
export function requireApiCredential(resourceMetadataUrl: string, refusedHint?: string): RequestHandler {
  const challenge = `Bearer resource_metadata="${resourceMetadataUrl}"`;
  return (_req: Request, res: Response, next: NextFunction) => {
    if (res.locals.credential) {
      next();
      return;
    }
    if (res.locals.bearerPresented !== true) {
      next(new AppError('unauthorized', 'No credential was sent.', { headers: { 'WWW-Authenticate': challenge } }));
      return;
    }
    next(
      new AppError('unauthorized', 'The credential is invalid, revoked or expired, or an OAuth token issued for another resource.', {
        headers: { 'WWW-Authenticate': `${challenge}, error="invalid_token"` },
        ...(refusedHint ? { hint: refusedHint } : {}),
      }),
    );
  };
}

export function credentialOf(res: Response): ApiCredential {
  const credential = res.locals.credential as ApiCredential | undefined;
  if (!credential) throw new Error('credentialOf called on a route without requireApiCredential');
  return credential;
}

/** Throws `forbidden` unless the credential carries the scope (shared by /v1 and the MCP tools). */
export function assertScope(credential: ApiCredential, scope: Scope): void {
  if (!credential.scopes.includes(scope)) {
    throw new AppError('forbidden', `This credential lacks the ${scope} scope.`, {
      hint: `Use an API key or OAuth token that carries ${scope}.`,
    });
  }
}

export function requireScope(scope: Scope): RequestHandler {
  return (_req, res, next) => {
    assertScope(credentialOf(res), scope);
    next();
  };
}
