import { Webhook, WebhookVerificationError as TheirVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook, WebhookVerificationError } from '../src/index.ts';

// The reference implementation of Standard Webhooks (npm `standardwebhooks`) on one side, the SDK on the other.
describe('verifyWebhook against the standardwebhooks package', () => {
  const secret = `whsec_${Buffer.from('a secret of thirty-two bytes ...').toString('base64')}`;
  const otherSecret = `whsec_${Buffer.from('another secret, also 32 bytes ..').toString('base64')}`;
  const payload = JSON.stringify({ type: 'video.completed', timestamp: '2026-11-27T00:00:00Z', data: { id: 'b1e0', status: 'completed' } });
  const theirHeaders = (body: string, key = secret, at = new Date(), id = 'msg_2Kx') => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(key).sign(id, at, body),
  });

  it('accepts what standardwebhooks signs, and standardwebhooks accepts what signWebhook signs', () => {
    expect(verifyWebhook(payload, theirHeaders(payload), secret)).toEqual(JSON.parse(payload));
    expect(verifyWebhook(Buffer.from(payload), new Headers(theirHeaders(payload)), secret)).toEqual(JSON.parse(payload));
    const ours = signWebhook(payload, secret, { id: 'msg_ours' });
    expect(new Webhook(secret).verify(payload, ours)).toEqual(JSON.parse(payload));
    expect(() => new Webhook(otherSecret).verify(payload, ours)).toThrow(TheirVerificationError);
  });

  it('accepts any of several signatures (a secret being rotated) and ignores other versions', () => {
    const headers = theirHeaders(payload);
    const old = theirHeaders(payload, otherSecret);
    const both = { ...headers, 'webhook-signature': `v1a,AAAA ${old['webhook-signature']} ${headers['webhook-signature']}` };
    expect(verifyWebhook(payload, both, secret)).toEqual(JSON.parse(payload));
    expect(verifyWebhook(payload, both, otherSecret)).toEqual(JSON.parse(payload));
  });

  it('rejects a wrong secret, a tampered body, a copied signature and a missing header', () => {
    const headers = theirHeaders(payload);
    expect(() => verifyWebhook(payload, headers, otherSecret)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(payload.replace('completed', 'failed'), headers, secret)).toThrow('No webhook-signature matches');
    expect(() => verifyWebhook(payload, { ...headers, 'webhook-id': 'msg_other' }, secret)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(payload, { ...headers, 'webhook-signature': 'v1,' }, secret)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(payload, { ...headers, 'webhook-signature': undefined }, secret)).toThrow('Missing');
  });

  it('rejects a timestamp outside the tolerance, either way, even with a valid signature', () => {
    const tenMinutes = 10 * 60_000;
    const old = theirHeaders(payload, secret, new Date(Date.now() - tenMinutes));
    const future = theirHeaders(payload, secret, new Date(Date.now() + tenMinutes));
    expect(() => verifyWebhook(payload, old, secret)).toThrow('outside the tolerance');
    expect(() => verifyWebhook(payload, future, secret)).toThrow('outside the tolerance');
    expect(() => new Webhook(secret).verify(payload, old)).toThrow(TheirVerificationError);
    expect(verifyWebhook(payload, old, secret, { toleranceSeconds: 15 * 60 })).toEqual(JSON.parse(payload));
    expect(() => verifyWebhook(payload, { ...theirHeaders(payload), 'webhook-timestamp': '17e8' }, secret)).toThrow('Invalid webhook-timestamp');
  });
});
