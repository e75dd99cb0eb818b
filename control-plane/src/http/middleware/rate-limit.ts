import type { Request, RequestHandler } from 'express';
import { AppError } from '../../errors/app-error.ts';
import type { RateDecision, RateLimiter, RatePolicy } from '../../services/rate-limiter.ts';
import type { ApiCredential } from '../../services/api-credential.ts';
import type { User } from '../../db/schema.ts';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The bucket of an account; anonymous callers are counted by address instead. */
export const accountRateSubject = (userId: string) => `user:${userId}`;

export function rateLimitedError(policy: RatePolicy, decision: RateDecision): AppError {
  return new AppError(
    'rate_limited',
    `More than ${policy.limit} ${policy.name} requests in ${policy.windowSeconds} seconds.`,
    { headers: { 'Retry-After': String(decision.resetSeconds) }, hint: `Wait ${decision.resetSeconds} seconds, then retry.` },
  );
}

/**
 * Rate limits per account (per address for anonymous callers), announced on every response in the IETF
 * httpapi RateLimit header fields; a 429 adds Retry-After. The policy follows the method unless the route
 * names one (/mcp POSTs carry reads and writes alike; the web app's expensive calls use `media`).
 */
export function rateLimit(limiter: RateLimiter, policyName?: RatePolicy['name']): RequestHandler {
  return async (req: Request, res, next) => {
    const policy = limiter.policies[policyName ?? (READ_METHODS.has(req.method) ? 'read' : 'write')];
    const userId = (res.locals.credential as ApiCredential | undefined)?.userId ?? (res.locals.webUser as User | undefined)?.id;
    const subject = userId ? accountRateSubject(userId) : `address:${req.ip ?? 'unknown'}`;
    const decision = await limiter.hit(subject, policy);
    res.set('RateLimit-Policy', `"${policy.name}";q=${policy.limit};w=${policy.windowSeconds}`);
    res.set('RateLimit', `"${policy.name}";r=${decision.remaining};t=${decision.resetSeconds}`);
    if (!decision.allowed) throw rateLimitedError(policy, decision);
    next();
  };
}
