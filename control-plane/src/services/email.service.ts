import { createHmac } from 'node:crypto';
import { FreeCreditsEmailsInput } from '@petsing/workflows';
import type { User, Video } from '../db/schema.ts';
import { AppError } from '../errors/app-error.ts';
import type { EmailOutboxRepository, OutboxMessage, OutboxStatus } from '../repositories/email-outbox.repository.ts';
import type { UserRepository } from '../repositories/user.repository.ts';
import { hashSecret } from './secrets.ts';
import { FREE_CREDITS_PER_MONTH } from '../domain/pricing.ts';
import { isSubscribed } from './user.service.ts';

type LifecycleEmailKind = 'welcome' | 'video_ready' | 'free_credits_renewed' | 'webhook_disabled';

type Composed = { kind: LifecycleEmailKind; dedupeKey: string; subject: string; body: string };

export type EmailLinks = { baseUrl: string; siteUrl: string; signingSecret: string };

/** Users per page of the monthly job: one enqueue statement per page. */
const RECIPIENT_BATCH_SIZE = 500;

/** The token of a user's unsubscribe link: an HMAC of the user id under the signing secret. */
export function unsubscribeToken(signingSecret: string, userId: string): string {
  return createHmac('sha256', signingSecret).update(`unsubscribe:${userId}`).digest('base64url');
}

/**
 * Lifecycle email (welcome, video ready, free credits renewed). Messages are queued in the outbox, once per
 * dedupe key, and only for users who have not opted out; EmailDispatcher delivers them. Every message
 * carries the user's unsubscribe link as List-Unsubscribe with RFC 8058 one-click.
 *
 * The unsubscribe token is derived (HMAC of the user id under the signing secret), so every message of a
 * user carries the same link without the token being stored: the users row keeps only its SHA-256 digest,
 * refreshed before each message is queued, and the link is looked up by that digest.
 */
export class EmailService {
  constructor(
    private readonly users: UserRepository,
    private readonly outbox: EmailOutboxRepository,
    private readonly links: EmailLinks,
  ) {}

  unsubscribeUrl(userId: string): string {
    return this.unsubscribeUrlFor(this.unsubscribeToken(userId));
  }

  private unsubscribeUrlFor(token: string): string {
    return `${this.links.baseUrl}/email/unsubscribe?token=${token}`;
  }

  /** Queues the welcome message of a new account. */
  async welcome(user: User): Promise<boolean> {
    const queued = await this.enqueue([user], () => ({
      kind: 'welcome',
      dedupeKey: `welcome:${user.id}`,
      subject: 'Welcome to petsing',
      body: [
        'Welcome to petsing!',
        '',
        'Turn a photo of your pet into a lip-synced singing video: pick a song, or bring your own audio.',
        `You get ${FREE_CREDITS_PER_MONTH} free videos every month.`,
        '',
        `Make your first video: ${this.links.siteUrl}`,
      ].join('\n'),
    }));
    return queued > 0;
  }

  /** Queues "your video is ready" for a finished web video; API videos are the integrator's business. */
  async videoReady(video: Pick<Video, 'id' | 'user_id' | 'origin'>): Promise<boolean> {
    if (video.origin !== 'web') return false;
    const user = await this.users.findById(video.user_id);
    if (!user) return false;
    const queued = await this.enqueue([user], () => ({
      kind: 'video_ready',
      dedupeKey: `video-ready:${video.id}`,
      subject: "Your pet's singing video is ready",
      body: ['Your singing video has finished rendering.', '', `Watch and download it: ${this.links.siteUrl}`].join('\n'),
    }));
    return queued > 0;
  }

  /** Tells the owner that one of their webhook endpoints was disabled for failing; once per disabling. */
  async webhookDisabled(userId: string, endpoint: { id: string; url: string; disabledAt: Date }, failingFor: string): Promise<boolean> {
    const user = await this.users.findById(userId);
    if (!user) return false;
    const queued = await this.enqueue([user], () => ({
      kind: 'webhook_disabled',
      dedupeKey: `webhook-disabled:${endpoint.id}:${endpoint.disabledAt.toISOString()}`,
      subject: 'A petsing webhook endpoint was disabled',
      body: [
        `Deliveries to your webhook endpoint ${endpoint.url} (id ${endpoint.id}) have failed for ${failingFor} without a success, so it was disabled and receives no more events.`,
        '',
        `Check that it answers 2xx within 10 seconds, then turn it on again with POST /v1/webhooks/${endpoint.id}/enable (and redeliver what it missed from its log).`,
        'GET /v1/webhooks/{id}/deliveries shows what it answered to each attempt.',
      ].join('\n'),
    }));
    return queued > 0;
  }

  /**
   * The monthly job: tells every opted-in user who existed when `month` (YYYY-MM, UTC) began that their
   * free credits renewed. Subscribers are skipped: they never spend free credits.
   * Running it again for the same month queues nothing new. Returns how many messages were queued.
   */
  async freeCreditsRenewed(month: string): Promise<number> {
    if (!FreeCreditsEmailsInput.safeParse({ month }).success) throw new AppError('invalid_request', `"${month}" is not a month (YYYY-MM).`);
    const monthStart = new Date(`${month}-01T00:00:00Z`);
    const label = new Intl.DateTimeFormat('en', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(monthStart);
    let queued = 0;
    let afterId: string | undefined;
    for (;;) {
      const page = await this.users.listEmailRecipients({ createdBefore: monthStart, afterId, limit: RECIPIENT_BATCH_SIZE });
      queued += await this.enqueue(
        page.filter((user) => !isSubscribed(user)),
        (user) => ({
          kind: 'free_credits_renewed',
          dedupeKey: `free-credits:${month}:${user.id}`,
          subject: `Your ${FREE_CREDITS_PER_MONTH} free videos for ${label} are here`,
          body: [
            `Your free credits renewed: you can make ${FREE_CREDITS_PER_MONTH} singing videos in ${label}.`,
            'Free credits reset at the start of every month (UTC).',
            '',
            `Make a video: ${this.links.siteUrl}`,
          ].join('\n'),
        }),
      );
      if (page.length < RECIPIENT_BATCH_SIZE) return queued;
      afterId = page.at(-1)!.id;
    }
  }

  /** Opts the holder of an unsubscribe token out of lifecycle email; idempotent. */
  async unsubscribe(token: string): Promise<{ email: string }> {
    // Looked up by digest: the comparison happens on hashes, so its timing says nothing about the token.
    const user = await this.users.optOutByUnsubscribeTokenHash(hashSecret(token));
    if (!user) {
      throw new AppError('invalid_unsubscribe_token', 'The unsubscribe token matches no user.');
    }
    return { email: user.email };
  }

  list(options: { status?: OutboxStatus | undefined; limit: number }): Promise<OutboxMessage[]> {
    return this.outbox.list(options);
  }

  private unsubscribeToken(userId: string): string {
    return unsubscribeToken(this.links.signingSecret, userId);
  }

  /** Queues one message per opted-in user, after making sure the stored token digest matches the link. */
  private async enqueue(users: User[], compose: (user: User) => Composed): Promise<number> {
    const recipients = users.filter((user) => !user.email_opt_out).map((user) => ({ user, token: this.unsubscribeToken(user.id) }));
    for (const { user, token } of recipients) {
      const digest = hashSecret(token);
      // The row already carries the digest after a user's first message; only a stale one is written.
      if (user.unsubscribe_token_hash !== digest) await this.users.setUnsubscribeTokenHash(user.id, digest);
    }
    return this.outbox.enqueue(
      recipients.map(({ user, token }) => {
        const message = compose(user);
        const unsubscribeUrl = this.unsubscribeUrlFor(token);
        return {
          userId: user.id,
          dedupeKey: message.dedupeKey,
          kind: message.kind,
          to: user.email,
          subject: message.subject,
          text: `${message.body}\n\n-- \nYou get this email because you have a petsing account.\nUnsubscribe: ${unsubscribeUrl}\n`,
          headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
        };
      }),
    );
  }
}
