import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type CryptoKey } from 'jose';

/**
 * The built-in development identity provider. It signs ID tokens with a key kept in DATA_DIR; the API
 * trusts it only while no external identity provider (OIDC_*) is configured.
 */
export const DEV_IDENTITY_AUDIENCE = 'petsing-dev';
const ALGORITHM = 'ES256';

export type DevIdentityKeys = { privateKey: CryptoKey; publicJwk: JWK; kid: string };

export const devIdentityIssuer = (baseUrl: string) => `${baseUrl}/dev-identity`;

export async function loadDevIdentityKeys(dataDir: string): Promise<DevIdentityKeys> {
  const path = join(dataDir, 'dev-identity-key.json');
  let privateJwk: JWK;
  try {
    privateJwk = JSON.parse(await readFile(path, 'utf8')) as JWK;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const { privateKey } = await generateKeyPair(ALGORITHM, { extractable: true });
    privateJwk = { ...(await exportJWK(privateKey)), kid: `dev-${Date.now().toString(36)}`, alg: ALGORITHM };
    await mkdir(dataDir, { recursive: true });
    await writeFile(path, JSON.stringify(privateJwk), { mode: 0o600, flag: 'wx' }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
    privateJwk = JSON.parse(await readFile(path, 'utf8')) as JWK;
  }
  const { d: _secret, ...publicJwk } = privateJwk;
  return {
    privateKey: (await importJWK(privateJwk, ALGORITHM)) as CryptoKey,
    publicJwk,
    kid: privateJwk.kid ?? 'dev',
  };
}

export async function mintDevIdToken(
  keys: DevIdentityKeys,
  input: { baseUrl: string; email: string; lifetimeSeconds?: number },
): Promise<string> {
  const email = input.email.trim().toLowerCase();
  return new SignJWT({ email, email_verified: true })
    .setProtectedHeader({ alg: ALGORITHM, kid: keys.kid, typ: 'JWT' })
    .setIssuer(devIdentityIssuer(input.baseUrl))
    .setAudience(DEV_IDENTITY_AUDIENCE)
    .setSubject(`dev|${email}`)
    .setIssuedAt()
    .setExpirationTime(`${input.lifetimeSeconds ?? 24 * 3600}s`)
    .sign(keys.privateKey);
}

/** ID token lifetime of the development provider, in seconds. */
const DEV_ID_TOKEN_LIFETIME_SECONDS = 24 * 3600;

/**
 * The development sign-in of the web app (POST /dev-identity/token): an ID token for an email address, no
 * password asked, signed with the same key in DATA_DIR that the API trusts while no OIDC_* provider is
 * configured (the key is read on first use; the API created it at start).
 */
export class DevIdentityProvider {
  private keys: Promise<DevIdentityKeys> | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly baseUrl: string,
  ) {}

  async signIn(email: string): Promise<{ idToken: string; expiresIn: number; email: string }> {
    this.keys ??= loadDevIdentityKeys(this.dataDir).catch((error: unknown) => {
      this.keys = undefined;
      throw error;
    });
    const lifetimeSeconds = DEV_ID_TOKEN_LIFETIME_SECONDS;
    const idToken = await mintDevIdToken(await this.keys, { baseUrl: this.baseUrl, email, lifetimeSeconds });
    return { idToken, expiresIn: lifetimeSeconds, email: email.trim().toLowerCase() };
  }
}
