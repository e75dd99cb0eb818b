import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): secrets are `whsec_` + base64 of random
 * bytes, and a message is signed as `v1,` + base64 HMAC-SHA256, keyed with the decoded secret, of
 * `{webhook-id}.{webhook-timestamp}.{body}`. Several signatures are sent space-separated (secret rotation).
 */
const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The webhook-signature header: one signature per secret that signs now. */
export function signatureHeader(secrets: string[], id: string, timestampSeconds: number, body: string): string {
  return secrets.map((secret) => signWebhook(secret, id, timestampSeconds, body)).join(' ');
}

const CIPHER = 'aes-256-gcm';
const FORMAT = 'v1';

/**
 * Webhook secrets at rest. They must be usable to sign, so unlike API keys they cannot be stored as hashes;
 * they are encrypted with AES-256-GCM under a key derived (HKDF) from the service's signing secret, so a
 * copy of the database alone does not reveal them. Rotating the signing secret makes stored webhook secrets
 * unreadable: their endpoints must be registered again (README, Webhooks).
 */
export class WebhookSecretBox {
  private readonly key: Buffer;

  constructor(signingSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', signingSecret, 'petsing', 'webhook-signing-secrets', 32));
  }

  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv(CIPHER, this.key, iv);
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [FORMAT, iv.toString('base64'), cipher.getAuthTag().toString('base64'), sealed.toString('base64')].join(':');
  }

  open(stored: string): string {
    const [format, iv, tag, sealed] = stored.split(':');
    if (format !== FORMAT || !iv || !tag || !sealed) throw new Error('Unknown webhook secret format.');
    const decipher = createDecipheriv(CIPHER, this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64')), decipher.final()]).toString('utf8');
  }
}
