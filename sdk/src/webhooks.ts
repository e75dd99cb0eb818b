import { createHmac, timingSafeEqual } from 'node:crypto';

/** A delivery that must not be trusted: missing headers, a timestamp outside the tolerance, no matching signature. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export type VerifyWebhookOptions = {
  /** How far `webhook-timestamp` may be from now, either way (replay protection). Default 300 s, as the specification suggests. */
  toleranceSeconds?: number;
  /** "Now", for tests. */
  now?: Date;
};

const DEFAULT_TOLERANCE_SECONDS = 5 * 60;
const SECRET_PREFIX = 'whsec_';

/**
 * Verifies a webhook delivery under the Standard Webhooks specification (https://www.standardwebhooks.com):
 * the HMAC-SHA256, keyed with the base64 secret after `whsec_`, of `{webhook-id}.{webhook-timestamp}.{body}`
 * must equal one of the space-separated `v1,<base64>` entries of `webhook-signature` (several while a secret is
 * being rotated), and the timestamp must be within the tolerance. Pass the body exactly as received (the raw
 * bytes, not re-serialized JSON). Returns the parsed body; throws WebhookVerificationError otherwise.
 */
export function verifyWebhook<T = unknown>(payload: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyWebhookOptions = {}): T {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header');
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('Invalid webhook-timestamp');
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError('webhook-timestamp is outside the tolerance (a replay, or a clock off by minutes)');
  }
  const body = bytes(payload);
  const expected = sign(secret, id, timestamp, body);
  const matches = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('No webhook-signature matches');
  return JSON.parse(body.toString('utf8')) as T;
}

/**
 * The three headers of a delivery of `payload`, signed as the service signs them: for testing a receiver (the
 * service's own deliveries are signed by the service).
 */
export function signWebhook(payload: string | Uint8Array, secret: string, delivery: { id: string; timestamp?: Date }): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const timestamp = String(Math.floor((delivery.timestamp ?? new Date()).getTime() / 1000));
  return {
    'webhook-id': delivery.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${sign(secret, delivery.id, timestamp, bytes(payload)).toString('base64')}`,
  };
}

function sign(secret: string, id: string, timestamp: string, body: Buffer): Buffer {
  return createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.`).update(body).digest();
}

function bytes(payload: string | Uint8Array): Buffer {
  return typeof payload === 'string' ? Buffer.from(payload) : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
}

function secretKey(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  if (key.length === 0) throw new WebhookVerificationError('The webhook secret is empty');
  return key;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(entry) ? entry.join(' ') : entry;
}
