import type { EmailSender } from './ports/email-sender.ts';
import type { Logger } from '../logging/logger.ts';
import type { EmailOutboxRepository } from '../repositories/email-outbox.repository.ts';
import { repeatEvery, type RepeatingTask } from './repeat-every.ts';

/** Attempts per message before it is marked failed. */
const MAX_ATTEMPTS = 5;
const BATCH_SIZE = 50;

export type DispatchOptions = {
  /** Pause between dispatch rounds of the background loop. */
  intervalMs: number;
  /** Retries back off from the message's creation: retryBaseMs × (4^attempts − 1), i.e. 3, 15, 63, 255 min. */
  retryBaseMs?: number;
};

export type DispatchResult = { sent: number; retrying: number; failed: number };

/**
 * Delivers the email outbox through SMTP. It runs in the control-worker process (so in `petsing start`
 * too); without a sender (no SMTP_URL) messages simply stay pending, visible with `petsing emails list`.
 * Delivery is at least once: a crash between the server's acceptance and the status update resends.
 */
export class EmailDispatcher {
  private readonly retryBaseMs: number;

  constructor(
    private readonly outbox: EmailOutboxRepository,
    private readonly sender: EmailSender | undefined,
    private readonly logger: Logger,
    private readonly options: DispatchOptions,
  ) {
    this.retryBaseMs = options.retryBaseMs ?? 60_000;
  }

  /** Sends what is due now, batch after batch while batches come back full and without failures. */
  async dispatchPending(): Promise<DispatchResult> {
    const total: DispatchResult = { sent: 0, retrying: 0, failed: 0 };
    const sender = this.sender;
    if (!sender) return total;
    for (;;) {
      const round = await this.outbox.withDeliverable({ limit: BATCH_SIZE, retryBaseMs: this.retryBaseMs }, async (messages, outcomes) => {
        const result: DispatchResult & { handled: number; undeliverable: number } = { sent: 0, retrying: 0, failed: 0, handled: messages.length, undeliverable: 0 };
        for (const message of messages) {
          if (message.recipient_opted_out) {
            await outcomes.abandon(message.id, 'The recipient unsubscribed before delivery.');
            result.failed++;
            result.undeliverable++;
            continue;
          }
          try {
            await sender.send({ to: message.to_address, subject: message.subject, text: message.text_body, headers: message.headers });
            await outcomes.sent(message.id);
            result.sent++;
          } catch (error) {
            const reason = error instanceof Error ? error.message : String(error);
            const status = await outcomes.attemptFailed(message.id, reason, MAX_ATTEMPTS);
            if (status === 'failed') result.failed++;
            else result.retrying++;
            this.logger.warn({ emailId: message.id, kind: message.kind, attempt: message.attempts + 1, status, smtp: sender.target, reason }, 'email delivery failed');
          }
        }
        return result;
      });
      total.sent += round.sent;
      total.retrying += round.retrying;
      total.failed += round.failed;
      // A delivery failure ends the round (the server is likely down); an opted-out recipient does not.
      if (round.handled < BATCH_SIZE || round.retrying > 0 || round.failed > round.undeliverable) return total;
    }
  }

  /** Dispatches every intervalMs until stopped; stopping waits for the round in progress. */
  start(): RepeatingTask {
    const sender = this.sender;
    if (!sender) {
      this.logger.info('SMTP_URL is not set: lifecycle email stays in the outbox (see `petsing emails list`)');
      return { stop: async () => {} };
    }
    this.logger.info({ smtp: sender.target }, 'dispatching lifecycle email');
    const loop = repeatEvery(
      this.options.intervalMs,
      async () => {
        const result = await this.dispatchPending();
        if (result.sent + result.retrying + result.failed > 0) this.logger.info(result, 'email dispatch round');
      },
      (error) => this.logger.error({ err: error }, 'email dispatch round failed'),
    );
    return {
      stop: async () => {
        await loop.stop();
        sender.close();
      },
    };
  }
}
