import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { FREE_CREDITS_EMAIL_SCHEDULE, TASK_QUEUES } from '@petsing/workflows';
import { connectTemporalClient } from '@petsing/platform/runtime';
import { sql } from 'kysely';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSmtpSender } from '../src/email/smtp-sender.ts';
import { createLogger } from '../src/logging/logger.ts';
import { EmailOutboxRepository } from '../src/repositories/email-outbox.repository.ts';
import { UserRepository } from '../src/repositories/user.repository.ts';
import { loadDevIdentityKeys, mintDevIdToken, type DevIdentityKeys } from '../src/services/dev-identity.ts';
import { EmailDispatcher } from '../src/services/email-dispatcher.ts';
import { EmailService } from '../src/services/email.service.ts';
import { UserService } from '../src/services/user.service.ts';
import { createPGliteTestDatabase } from '../../test/support/database.ts';
import { json } from '../../test/support/http.ts';
import { freePort, waitFor } from '../../test/support/processes.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', 'bin', 'petsing.mjs');
const SMTP_USER = 'mailer';
const SMTP_PASSWORD = 's3cret-smtp-password';

type Captured = { from: string | undefined; to: string[]; user: unknown; raw: string };

/** A local SMTP server speaking the real protocol; it records what it accepts, or refuses every sender. */
async function startSmtpServer(options: { refuse?: boolean } = {}) {
  const messages: Captured[] = [];
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onMailFrom(_address, _session, callback) {
      callback(options.refuse ? Object.assign(new Error('Mailbox temporarily unavailable'), { responseCode: 451 }) : null);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const from = session.envelope.mailFrom;
        messages.push({ from: from ? from.address : undefined, to: session.envelope.rcptTo.map((r) => r.address), user: session.user, raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  return { port, messages, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The header block of a raw message, unfolded, by lower-case name. */
function headersOf(raw: string): Map<string, string> {
  const block = raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n(?=[ \t])/g, '');
  return new Map(block.split(/\r?\n/).map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
}

const monthOf = (date: Date) => date.toISOString().slice(0, 7);
const nextMonth = () => {
  const now = new Date();
  return monthOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)));
};

describe('lifecycle email and unsubscribe', () => {
  let service: TestService;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let identityKeys: DevIdentityKeys;
  let temporal: { client: Client; close(): Promise<void> };

  const db = () => service.database.db;
  const outboxOf = (userId: string) => db().selectFrom('email_outbox').selectAll().where('user_id', '=', userId).orderBy('created_at').execute();
  const userRow = (id: string) => db().selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  /** Signs in through the web app (the first request creates the account) and returns the account. */
  const signIn = async (email: string) => {
    const token = await mintDevIdToken(identityKeys, { baseUrl: service.baseUrl, email });
    const response = await fetch(`${service.baseUrl}/user/me`, { headers: { Authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    return json(response);
  };
  /** A new web user and the unsubscribe link its welcome email carries. */
  const signUp = async (email: string) => {
    const account = await signIn(email);
    const [welcome] = await outboxOf(account.id);
    const link = /^<(.+)>$/.exec(welcome!.headers['List-Unsubscribe']!)![1]!;
    return { id: account.id as string, link };
  };
  const unsubscribe = (url: string, init?: RequestInit) => fetch(url, init);
  const insertVideo = async (userId: string, origin: 'web' | 'api') =>
    db()
      .insertInto('videos')
      .values({
        user_id: userId,
        origin,
        payment: origin === 'web' ? 'free_credit' : 'api_credit',
        status: 'processing',
        has_watermark: origin === 'web',
        image_key: 'uploads/pet.png',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
  const complete = (videoId: string) =>
    service.context.services.renders.complete(videoId, { outputKey: `videos/${videoId}/video-1.mp4`, thumbnailKey: `videos/${videoId}/thumbnail-1.jpg`, watermark: false });

  beforeAll(async () => {
    smtp = await startSmtpServer();
    service = await startTestService({
      temporal: true,
      controlWorker: true,
      env: { SMTP_URL: `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`, EMAIL_FROM: 'petsing <hello@example.com>', SITE_URL: 'https://site.example.com' },
    });
    identityKeys = await loadDevIdentityKeys(service.env.DATA_DIR!);
    temporal = await connectTemporalClient({ ...service.context.config.env });
  }, 180_000);
  afterAll(async () => {
    await temporal?.close();
    await service?.stop();
    await smtp?.close();
  });

  it('queues exactly one welcome email on the first sign-in, with both list headers and a working unsubscribe link', async () => {
    const account = await signIn('Welcome.Person@example.com');
    await signIn('welcome.person@example.com');

    const rows = await outboxOf(account.id);
    expect(rows).toHaveLength(1);
    const [welcome] = rows;
    expect(welcome).toMatchObject({ kind: 'welcome', dedupe_key: `welcome:${account.id}`, to_address: 'welcome.person@example.com', status: 'pending', attempts: 0 });
    expect(welcome!.subject).toBe('Welcome to petsing');
    expect(welcome!.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
    const match = /^<([^>]+\/email\/unsubscribe\?token=([A-Za-z0-9_-]{43}))>$/.exec(welcome!.headers['List-Unsubscribe']!);
    const [, link, token] = match!;
    expect(link).toBe(`${service.baseUrl}/email/unsubscribe?token=${token}`);
    expect(welcome!.text_body).toContain(`Unsubscribe: ${link}`);
    expect(welcome!.text_body).toContain('https://site.example.com');

    // Only the token's digest is stored, and it is what the link is looked up by.
    const user = await userRow(account.id);
    expect(user.unsubscribe_token_hash).toBe(createHash('sha256').update(token!).digest('hex'));
    expect(JSON.stringify(user)).not.toContain(token);

    const response = await unsubscribe(link!);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await json(response);
    expect(body).toEqual({ unsubscribed: true, email: 'w***@example.com', message: expect.any(String) });
    expect(JSON.stringify(body)).not.toContain(token);
    expect((await userRow(account.id)).email_opt_out).toBe(true);
    expect((await signIn('welcome.person@example.com')).email_opt_out).toBe(true);

    const again = await unsubscribe(link!);
    expect(again.status).toBe(200);
    expect((await json(again)).unsubscribed).toBe(true);
  });

  it('answers GET without a token or with an unknown one with 400', async () => {
    const missing = await unsubscribe(`${service.baseUrl}/email/unsubscribe`);
    expect(missing.status).toBe(400);
    const missingBody = await json(missing);
    expect(missingBody.error).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(missingBody.message).toBe(missingBody.error.message);

    const empty = await unsubscribe(`${service.baseUrl}/email/unsubscribe?token=`);
    expect(empty.status).toBe(400);
    expect((await json(empty)).error.code).toBe('invalid_request');

    const unknown = await unsubscribe(`${service.baseUrl}/email/unsubscribe?token=not-a-token-of-anyone`);
    expect(unknown.status).toBe(400);
    expect((await json(unknown)).error).toMatchObject({ code: 'invalid_unsubscribe_token', status: 400, documentation_url: `${service.baseUrl}/docs/errors#invalid_unsubscribe_token` });
  });

  it('accepts the RFC 8058 one-click POST (form body, token in the query), twice', async () => {
    const { id, link } = await signUp('one.click@example.com');
    const post = () =>
      unsubscribe(link, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    const first = await post();
    expect(first.status).toBe(200);
    expect(await json(first)).toMatchObject({ unsubscribed: true, email: 'o***@example.com' });
    expect((await userRow(id)).email_opt_out).toBe(true);
    expect((await post()).status).toBe(200);
  });

  it('accepts POST with the token in a JSON body; refuses a missing, unknown or oversized one', async () => {
    const { id, link } = await signUp('json.body@example.com');
    const token = new URL(link).searchParams.get('token');
    const post = (body: string, contentType = 'application/json') =>
      fetch(`${service.baseUrl}/email/unsubscribe`, { method: 'POST', headers: { 'Content-Type': contentType }, body });

    expect((await userRow(id)).email_opt_out).toBe(false);
    const accepted = await post(JSON.stringify({ token }));
    expect(accepted.status).toBe(200);
    expect((await json(accepted)).email).toBe('j***@example.com');
    expect((await userRow(id)).email_opt_out).toBe(true);
    expect((await post(JSON.stringify({ token }))).status).toBe(200);

    const missing = await post('{}');
    expect(missing.status).toBe(400);
    expect((await json(missing)).error.code).toBe('invalid_request');
    const oneClickWithoutToken = await post('List-Unsubscribe=One-Click', 'application/x-www-form-urlencoded');
    expect(oneClickWithoutToken.status).toBe(400);
    expect((await json(oneClickWithoutToken)).error.code).toBe('invalid_request');
    const unknown = await post(JSON.stringify({ token: 'x'.repeat(43) }));
    expect(unknown.status).toBe(400);
    expect((await json(unknown)).error.code).toBe('invalid_unsubscribe_token');
    const oversizedForm = await post(`List-Unsubscribe=One-Click&token=${'x'.repeat(4096)}`, 'application/x-www-form-urlencoded');
    expect(oversizedForm.status).toBe(413);
  });

  it('sends video-ready email for completed web videos only, once each, and none to opted-out users', async () => {
    const optedIn = await signUp('video.fan@example.com');
    const optedOut = await signUp('video.quiet@example.com');
    expect((await unsubscribe(optedOut.link)).status).toBe(200);

    const webVideo = await insertVideo(optedIn.id, 'web');
    const apiVideo = await insertVideo(optedIn.id, 'api');
    const quietVideo = await insertVideo(optedOut.id, 'web');
    for (const video of [webVideo, apiVideo, quietVideo]) await complete(video.id);
    await complete(webVideo.id); // a retried activity, or the watermark-free re-render

    const readyFor = async (userId: string) => (await outboxOf(userId)).filter((row) => row.kind === 'video_ready');
    const ready = await readyFor(optedIn.id);
    expect(ready).toHaveLength(1);
    expect(ready[0]).toMatchObject({ dedupe_key: `video-ready:${webVideo.id}`, to_address: 'video.fan@example.com', status: 'pending' });
    expect(ready[0]!.headers['List-Unsubscribe']).toBe(`<${optedIn.link}>`);
    expect(ready[0]!.text_body).toContain('https://site.example.com');
    expect(await readyFor(optedOut.id)).toEqual([]);
  });

  it('queues the free-credits email once per user and month, skipping opted-out users, subscribers and newer accounts', async () => {
    const optedIn = await signUp('credits.fan@example.com');
    const optedOut = await signUp('credits.quiet@example.com');
    const subscriber = await signUp('credits.subscriber@example.com');
    expect((await unsubscribe(optedOut.link, { method: 'POST' })).status).toBe(200);
    await db().updateTable('users').set({ subscription_status: 'active' }).where('id', '=', subscriber.id).execute();

    const { email } = service.context.services;
    const month = nextMonth();
    const freeCreditsOf = async (userId: string) => (await outboxOf(userId)).filter((row) => row.kind === 'free_credits_renewed');

    // Accounts created this month did not have their credits renewed this month.
    await email.freeCreditsRenewed(monthOf(new Date()));
    expect(await freeCreditsOf(optedIn.id)).toEqual([]);

    expect(await email.freeCreditsRenewed(month)).toBeGreaterThanOrEqual(1);
    expect(await email.freeCreditsRenewed(month)).toBe(0);
    const rows = await freeCreditsOf(optedIn.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ dedupe_key: `free-credits:${month}:${optedIn.id}`, status: 'pending' });
    expect(rows[0]!.subject).toMatch(/^Your 2 free videos for \w+ \d{4} are here$/);
    expect(rows[0]!.headers).toEqual({ 'List-Unsubscribe': `<${optedIn.link}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
    expect(await freeCreditsOf(optedOut.id)).toEqual([]);
    expect(await freeCreditsOf(subscriber.id)).toEqual([]);
    await expect(email.freeCreditsRenewed('2026-13')).rejects.toThrow(/not a month/);
  });

  it('runs the free-credits job from a monthly Temporal schedule created by the control worker', async () => {
    const handle = temporal.client.schedule.getHandle(FREE_CREDITS_EMAIL_SCHEDULE.id);
    const description = await handle.describe();
    expect(description.action).toMatchObject({ type: 'startWorkflow', workflowType: 'sendFreeCreditsRenewedEmails', taskQueue: TASK_QUEUES.control });
    expect(description.spec.calendars).toEqual([
      expect.objectContaining({ dayOfMonth: [{ start: 1, end: 1, step: 1 }], hour: [{ start: 0, end: 0, step: 1 }], minute: [{ start: 0, end: 0, step: 1 }] }),
    ]);
    await service.context.services.recurringWork.ensure(); // every control worker start: a no-op once it exists

    const veteran = await signUp('credits.veteran@example.com');
    await db().updateTable('users').set({ created_at: sql<Date>`now() - interval '40 days'` }).where('id', '=', veteran.id).execute();
    await handle.trigger();
    const dedupeKey = `free-credits:${monthOf(new Date())}:${veteran.id}`;
    await waitFor('the scheduled run to queue the email', async () => (await outboxOf(veteran.id)).some((row) => row.dedupe_key === dedupeKey), 60_000);
  }, 90_000);

  it('delivers pending email through SMTP with the list headers and marks it sent; opted-out recipients get nothing', async () => {
    const fan = await signUp('deliver.fan@example.com');
    const quiet = await signUp('deliver.quiet@example.com');
    expect((await unsubscribe(quiet.link)).status).toBe(200);
    const pending = await db().selectFrom('email_outbox').select('id').where('status', '=', 'pending').execute();

    const result = await service.context.services.emailDispatcher.dispatchPending();
    expect(result.retrying).toBe(0);
    expect(result.sent + result.failed).toBe(pending.length);
    expect(smtp.messages).toHaveLength(result.sent);
    expect(await db().selectFrom('email_outbox').select('id').where('status', '=', 'pending').execute()).toEqual([]);

    const [fanWelcome] = await outboxOf(fan.id);
    expect(fanWelcome).toMatchObject({ status: 'sent', attempts: 1, last_error: null });
    expect(fanWelcome!.sent_at).toBeInstanceOf(Date);
    const delivered = smtp.messages.find((message) => message.to.includes('deliver.fan@example.com'))!;
    expect(delivered).toMatchObject({ from: 'hello@example.com', user: SMTP_USER });
    const headers = headersOf(delivered.raw);
    expect(headers.get('list-unsubscribe')).toBe(`<${fan.link}>`);
    expect(headers.get('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    expect(headers.get('subject')).toBe('Welcome to petsing');
    expect(headers.get('from')).toBe('petsing <hello@example.com>');
    expect(delivered.raw).toContain('site.example.com');

    // Queued before the opt-out: given up, never sent.
    const [quietWelcome] = await outboxOf(quiet.id);
    expect(quietWelcome).toMatchObject({ status: 'failed', last_error: 'The recipient unsubscribed before delivery.' });
    expect(smtp.messages.some((message) => message.to.includes('deliver.quiet@example.com'))).toBe(false);

    expect(await service.context.services.emailDispatcher.dispatchPending()).toEqual({ sent: 0, retrying: 0, failed: 0 });
  });

  it('counts failed SMTP attempts, backs off between them, and gives up after five', async () => {
    const refusing = await startSmtpServer({ refuse: true });
    const sender = createSmtpSender(`smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${refusing.port}`, 'petsing <hello@example.com>');
    const outbox = new EmailOutboxRepository(db(), true);
    try {
      const { id } = await signUp('deliver.later@example.com');
      const welcome = async () => (await outboxOf(id))[0]!;

      // With the production back-off, a failed message waits minutes before its next attempt.
      const patient = new EmailDispatcher(outbox, sender, service.context.logger, { intervalMs: 1000 });
      expect(await patient.dispatchPending()).toEqual({ sent: 0, retrying: 1, failed: 0 });
      expect(await welcome()).toMatchObject({ status: 'pending', attempts: 1 });
      expect((await welcome()).last_error).toMatch(/Mailbox temporarily unavailable/);
      expect((await welcome()).last_error).not.toContain(SMTP_PASSWORD);
      expect(await patient.dispatchPending()).toEqual({ sent: 0, retrying: 0, failed: 0 });

      const eager = new EmailDispatcher(outbox, sender, service.context.logger, { intervalMs: 1000, retryBaseMs: 0 });
      for (let attempt = 2; attempt <= 4; attempt++) {
        expect(await eager.dispatchPending()).toEqual({ sent: 0, retrying: 1, failed: 0 });
        expect(await welcome()).toMatchObject({ status: 'pending', attempts: attempt });
      }
      expect(await eager.dispatchPending()).toEqual({ sent: 0, retrying: 0, failed: 1 });
      expect(await welcome()).toMatchObject({ status: 'failed', attempts: 5 });
      expect(await eager.dispatchPending()).toEqual({ sent: 0, retrying: 0, failed: 0 });
      expect(refusing.messages).toEqual([]);
    } finally {
      sender.close();
      await refusing.close();
    }
  });

  it('lists the outbox with `petsing emails list`', async () => {
    const { BASE_URL: _vitestBase, ...inherited } = process.env;
    const petsing = async (...args: string[]) =>
      JSON.parse((await run(process.execPath, [cli, ...args], { env: { ...inherited, ...service.env }, timeout: 60_000 })).stdout);

    const all = await petsing('emails', 'list', '--json');
    const total = await db().selectFrom('email_outbox').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
    expect(all.emails).toHaveLength(Math.min(50, Number(total.count)));
    const welcome = all.emails.find((email: { to: string }) => email.to === 'deliver.fan@example.com');
    expect(welcome).toMatchObject({ kind: 'welcome', status: 'sent', attempts: 1, subject: 'Welcome to petsing', headers: { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } });

    const failed = await petsing('emails', 'list', '--status', 'failed', '--limit', '5', '--json');
    expect(failed.emails.length).toBeGreaterThanOrEqual(2);
    expect(failed.emails.every((email: { status: string }) => email.status === 'failed')).toBe(true);
    expect(failed.emails[0]).toMatchObject({ to: 'deliver.later@example.com', attempts: 5 });
  }, 90_000);
});

describe('lifecycle email on the embedded database (PGlite)', () => {
  it('queues, delivers from the background loop without row locks, stops cleanly, and unsubscribes', async () => {
    const database = await createPGliteTestDatabase();
    const smtp = await startSmtpServer();
    try {
      const users = new UserRepository(database.db);
      const outbox = new EmailOutboxRepository(database.db, false);
      const email = new EmailService(users, outbox, { baseUrl: 'http://localhost:8080', siteUrl: 'http://localhost:8080', signingSecret: 's'.repeat(32) });
      const user = await new UserService(users).create({ email: 'embedded@example.com' });
      expect(await email.welcome(user)).toBe(true);
      expect(await email.welcome(user)).toBe(false);

      const sender = createSmtpSender(`smtp://127.0.0.1:${smtp.port}`, 'petsing <no-reply@localhost>');
      const loop = new EmailDispatcher(outbox, sender, createLogger('silent'), { intervalMs: 50 }).start();
      await waitFor('the loop to deliver the welcome email', async () => smtp.messages.length === 1, 10_000);
      await loop.stop();
      const [row] = await outbox.list({ limit: 10 });
      expect(row).toMatchObject({ status: 'sent', attempts: 1, to_address: 'embedded@example.com' });
      expect(headersOf(smtp.messages[0]!.raw).get('list-unsubscribe')).toBe(`<${email.unsubscribeUrl(user.id)}>`);

      const token = new URL(email.unsubscribeUrl(user.id)).searchParams.get('token')!;
      expect(await email.unsubscribe(token)).toEqual({ email: 'embedded@example.com' });
      expect(await email.videoReady({ id: '00000000-0000-4000-8000-000000000000', user_id: user.id, origin: 'web' })).toBe(false);
    } finally {
      await smtp.close();
      await database.drop();
    }
  });
});
