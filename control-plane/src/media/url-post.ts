import { withDeadline } from './deadline.ts';
import type { HostVetter } from './host-vetting.ts';
import { describeNetworkError, discard, openPinnedClient } from './pinned-connection.ts';
import { unreachable, UrlRefusedError } from './url-refusal.ts';

/**
 * The POST to a user URL that webhook deliveries make: the same vetting and pinning as a download, names
 * resolved now; redirects are not followed (a 3xx is an answer like any other) and only the start of the
 * answer is kept.
 */

export interface PostUserUrlOptions {
  body: string;
  headers: Record<string, string>;
  /** Deadline for the whole exchange, DNS included. */
  timeoutMs: number;
  /** At most this many bytes of the answer are read and kept. */
  maxResponseBytes: number;
}

export interface PostedUrl {
  statusCode: number;
  /** The first maxResponseBytes of the answer, as UTF-8. */
  responseSnippet: string;
}

/** The POST function of a fetcher, over its vetter and TLS trust anchors. */
export function createUrlPoster(
  vetter: HostVetter,
  tlsCa: string | Buffer | undefined,
): (input: string, options: PostUserUrlOptions) => Promise<PostedUrl> {
  return async function postUserUrl(input, options) {
    const deadline = withDeadline(undefined, options.timeoutMs);
    const host = await vetter.resolveVetted(vetter.vetUrl(input), deadline.signal);
    const client = openPinnedClient(host, { connectTimeoutMs: options.timeoutMs, stallTimeoutMs: options.timeoutMs, tlsCa });
    try {
      const { statusCode, body } = await client.request({
        method: 'POST',
        path: `${host.url.pathname}${host.url.search}`,
        headers: { ...options.headers, 'accept-encoding': 'identity' },
        body: options.body,
        signal: deadline.signal,
      });
      const chunks: Buffer[] = [];
      let received = 0;
      for await (const chunk of body as AsyncIterable<Buffer>) {
        chunks.push(chunk.subarray(0, options.maxResponseBytes - received));
        received += Math.min(chunk.length, options.maxResponseBytes - received);
        if (received >= options.maxResponseBytes) break;
      }
      discard(body);
      return { statusCode, responseSnippet: Buffer.concat(chunks).toString('utf8') };
    } catch (error) {
      if (error instanceof UrlRefusedError) throw error;
      if (deadline.timedOut()) throw unreachable('timeout', `The URL did not answer within ${options.timeoutMs / 1000} s.`, error);
      const { reason, detail } = describeNetworkError(error);
      throw unreachable(reason, `The URL could not be reached: ${detail}.`, error);
    } finally {
      await client.destroy().catch(() => undefined);
    }
  };
}
