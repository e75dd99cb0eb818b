import type { Request, RequestHandler } from 'express';
import { AppError } from '../../errors/app-error.ts';
import type { RateLimiter } from '../../services/rate-limiter.ts';
import type { ApiCredential } from '../../services/api-key.service.ts';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The public API's rate limits, per account (per address for anonymous callers), announced on every
 * response in the IETF httpapi RateLimit header fields; a 429 adds Retry-After.
 */
export function rateLimit(limiter: RateLimiter): RequestHandler {
  return async (req: Request, res, next) => {
    const policy = READ_METHODS.has(req.method) ? limiter.policies.read : limiter.policies.write;
    const credential = res.locals.credential as ApiCredential | undefined;
    const subject = credential ? `user:${credential.userId}` : `address:${req.ip ?? 'unknown'}`;
    const decision = await limiter.hit(subject, policy);
    res.set('RateLimit-Policy', `"${policy.name}";q=${policy.limit};w=${policy.windowSeconds}`);
    res.set('RateLimit', `"${policy.name}";r=${decision.remaining};t=${decision.resetSeconds}`);
    if (!decision.allowed) {
      throw new AppError(
        'rate_limited',
        `More than ${policy.limit} ${policy.name} requests in ${policy.windowSeconds} seconds.`,
        { headers: { 'Retry-After': String(decision.resetSeconds) } },
      );
    }
    next();
  };
}
