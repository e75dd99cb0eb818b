import { createLocalJWKSet, createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { ControlPlaneConfig } from '../config/env.ts';
import type { User } from '../db/schema.ts';
import type { Logger } from '../logging/logger.ts';
import { AppError, notFound } from '../errors/app-error.ts';
import type { UserRepository } from '../repositories/user.repository.ts';
import { DEV_IDENTITY_AUDIENCE, devIdentityIssuer, type DevIdentityKeys } from './dev-identity.ts';
import type { UserService } from './user.service.ts';

/**
 * Asymmetric signatures only: with a public JWKS, accepting HS* would let anyone who has the public key
 * forge tokens (key confusion), and `none` is no signature at all.
 */
const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const CLOCK_TOLERANCE_SECONDS = 30;

type IdentityClaims = { subject: string; email: string | undefined; emailVerified: boolean };

export type IdTokenVerifier = (token: string) => Promise<IdentityClaims>;

export class InvalidIdToken extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'InvalidIdToken';
  }
}

/**
 * Verifies ID tokens of the configured OpenID Connect provider (OIDC_ISSUER, OIDC_AUDIENCE, OIDC_JWKS_URL)
 * or, when none is configured, of the built-in development provider. Never both: once an external
 * provider is configured, development tokens are refused.
 */
export function createIdTokenVerifier(config: ControlPlaneConfig, devKeys: DevIdentityKeys | undefined): IdTokenVerifier {
  const external = config.externalIdentityProvider;
  let keys: JWTVerifyGetKey;
  let issuer: string;
  let audience: string;
  if (external) {
    // jose caches the key set and refetches it when a token names an unknown kid (at most once per cooldown).
    keys = createRemoteJWKSet(new URL(external.jwksUrl), {
      cacheMaxAge: 10 * 60_000,
      cooldownDuration: config.env.OIDC_JWKS_COOLDOWN_SECONDS * 1000,
      timeoutDuration: 5_000,
    });
    issuer = external.issuer;
    audience = external.audience;
  } else {
    if (!devKeys) throw new Error('The development identity provider needs its keys when no OIDC provider is configured');
    keys = createLocalJWKSet({ keys: [devKeys.publicJwk] });
    issuer = devIdentityIssuer(config.baseUrl);
    audience = DEV_IDENTITY_AUDIENCE;
  }
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer,
        audience,
        algorithms: ID_TOKEN_ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'exp'],
      });
      const email = typeof payload.email === 'string' && payload.email.length > 0 ? payload.email.trim().toLowerCase() : undefined;
      // Providers send the flag as a boolean; some (Cognito) as the string "true".
      const emailVerified = payload.email_verified === true || payload.email_verified === 'true';
      return { subject: payload.sub!, email, emailVerified };
    } catch (error) {
      if (error instanceof joseErrors.JOSEError) throw new InvalidIdToken(describeJoseError(error), { cause: error });
      throw error;
    }
  };
}

function describeJoseError(error: InstanceType<typeof joseErrors.JOSEError>): string {
  if (error instanceof joseErrors.JWTExpired) return 'The ID token has expired; sign in again.';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `The ID token's "${error.claim}" claim is not acceptable.`;
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'The ID token is not signed with an accepted asymmetric algorithm.';
  if (error instanceof joseErrors.JWKSNoMatchingKey) return "The ID token's signing key is not one of the identity provider's keys.";
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) return "The identity provider's keys could not be read.";
  return 'The ID token is malformed or its signature is invalid.';
}

export type AccountCreatedListener = (user: User) => Promise<void>;

/**
 * Web sign-in. An account comes to exist on the first request carrying a valid ID token with a verified
 * email address: it is created then (or, for an account an operator created by email, linked to the
 * token's subject). A valid token without a verified email has no account: 404. See docs/decisions.md.
 */
export class IdentityService {
  private readonly verify: IdTokenVerifier;
  private readonly users: UserService;
  private readonly userRepository: UserRepository;
  private readonly logger: Logger;
  private readonly onAccountCreated: AccountCreatedListener;

  constructor(dependencies: {
    verify: IdTokenVerifier;
    users: UserService;
    userRepository: UserRepository;
    logger: Logger;
    onAccountCreated?: AccountCreatedListener;
  }) {
    ({ verify: this.verify, users: this.users, userRepository: this.userRepository, logger: this.logger } = dependencies);
    this.onAccountCreated = dependencies.onAccountCreated ?? (async () => {});
  }

  /** The account of a valid token, created on first sign-in; throws 404 when it has none and can get none. */
  async signIn(token: string): Promise<User> {
    const claims = await this.verify(token);
    const known = await this.userRepository.findByIdentitySubject(claims.subject);
    if (known) return known;
    if (!claims.email || !claims.emailVerified) {
      throw notFound('An account for this sign-in', {
        hint: 'Sign in with an identity whose email address is verified; the account is created on the first request.',
      });
    }
    const byEmail = await this.userRepository.findByEmail(claims.email);
    if (byEmail) {
      const linked = await this.userRepository.linkIdentitySubject(byEmail.id, claims.subject);
      if (linked) return linked;
      // A concurrent first request of the same subject may have linked it meanwhile.
      const again = await this.userRepository.findByIdentitySubject(claims.subject);
      if (again) return again;
      throw new AppError('conflict', `The email address ${claims.email} belongs to an account of another sign-in.`, {
        hint: 'Sign in with the identity that created the account, or ask support to move it.',
      });
    }
    try {
      const user = await this.users.create({ email: claims.email, identitySubject: claims.subject });
      // The account exists either way; a failed welcome must not fail the sign-in.
      await this.onAccountCreated(user).catch((error: unknown) => this.logger.error({ err: error, userId: user.id }, 'account-created hook failed'));
      return user;
    } catch (error) {
      // Two first requests of one new user raced; the other one created the account.
      const created = error instanceof AppError && error.code === 'conflict' ? await this.userRepository.findByIdentitySubject(claims.subject) : undefined;
      if (created) return created;
      throw error;
    }
  }
}
