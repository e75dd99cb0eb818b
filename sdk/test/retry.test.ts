import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Petsing, PetsingError } from '../src/index.ts';

type Seen = { method: string; path: string; idempotencyKey: string | undefined; at: number };

/**
 * What sits between a client and the service fails in ways the service itself does not: a proxy's 502/503 page
 * without an ErrorDetail, a connection cut before the answer. A local HTTP server plays those; what the service
 * answers itself is tested against the real one in sdk.test.ts.
 */
describe('retries', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  async function serve(answer: (req: IncomingMessage, res: ServerResponse, index: number) => void) {
    const seen: Seen[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push({ method: req.method!, path: req.url!, idempotencyKey: req.headers['idempotency-key'] as string | undefined, at: Date.now() });
        answer(req, res, seen.length - 1);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    close = () => new Promise<void>((resolve) => server.close(() => resolve()));
    const { port } = server.address() as { port: number };
    return { seen, baseUrl: `http://127.0.0.1:${port}` };
  }
  const account = { user_id: 'u1', credit_balance: 1, credits_per_video: 1, scopes: ['videos:read'] };
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
  const errorBody = (status: number, code: string, retryable: boolean, extra: Record<string, unknown> = {}) => ({
    error: { code, message: code, status, hint: 'h', documentation_url: 'http://x/docs/errors', retryable, ...extra },
    message: code,
  });

  it('retries a proxy\'s 502/503 page (no ErrorDetail) with back-off, and gives up after maxRetries with the last answer', async () => {
    const flaky = await serve((_req, res, index) => (index < 2 ? res.writeHead(index ? 502 : 503, { 'Content-Type': 'text/html' }).end('<h1>Bad gateway</h1>') : json(res, 200, account)));
    expect(await new Petsing({ apiKey: 'k', baseUrl: flaky.baseUrl, retry: { baseDelayMs: 20 } }).me()).toEqual(account);
    expect(flaky.seen).toHaveLength(3);
    await close!();

    const down = await serve((_req, res) => res.writeHead(503).end());
    const error = await new Petsing({ apiKey: 'k', baseUrl: down.baseUrl, retry: { maxRetries: 2, baseDelayMs: 20 } }).me().catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ status: 503, code: 'http_503', retryable: true });
    expect(down.seen).toHaveLength(3);
  });

  it('waits Retry-After when given, and answers at once when it is longer than maxDelayMs', async () => {
    const limited = await serve((_req, res, index) => (index === 0 ? json(res, 429, errorBody(429, 'rate_limited', true, { retry_after_seconds: 1 }), { 'Retry-After': '1' }) : json(res, 200, account)));
    await new Petsing({ apiKey: 'k', baseUrl: limited.baseUrl }).me();
    expect(limited.seen[1]!.at - limited.seen[0]!.at).toBeGreaterThanOrEqual(950);
    await close!();

    const long = await serve((_req, res) => json(res, 429, errorBody(429, 'rate_limited', true), { 'Retry-After': '120' }));
    const started = Date.now();
    const error = await new Petsing({ apiKey: 'k', baseUrl: long.baseUrl }).me().catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(PetsingError);
    expect(error).toMatchObject({ status: 429, retryAfterSeconds: 120 });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(long.seen).toHaveLength(1);
  });

  it('after a cut connection sends a create again with the same Idempotency-Key, but never an upload', async () => {
    const cut = await serve((req, res, index) => {
      if (index === 0 || req.url === '/v1/images') return req.socket.destroy();
      json(res, 202, { id: '7d5b8a3e-5f1e-4f4a-9a51-0c6f0f7b8d11', status: 'processing', credits_remaining: 0, poll_url: 'http://x' });
    });
    const petsing = new Petsing({ apiKey: 'k', baseUrl: cut.baseUrl, retry: { baseDelayMs: 20 } });
    await petsing.createVideo({ template_id: '1', image_url: 'https://example.com/cat.jpg' });
    expect(cut.seen.map((request) => request.path)).toEqual(['/v1/videos', '/v1/videos']);
    expect(cut.seen[1]!.idempotencyKey).toBe(cut.seen[0]!.idempotencyKey);

    await expect(petsing.uploadImage(Buffer.from('not really a photo'), { filename: 'cat.jpg' })).rejects.toThrow();
    expect(cut.seen.filter((request) => request.path === '/v1/images')).toHaveLength(1);
  });
});
