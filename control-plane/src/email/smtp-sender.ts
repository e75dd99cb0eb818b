import { createTransport } from 'nodemailer';

import type { EmailSender } from '../services/ports/email-sender.ts';

const MAX_ERROR_LENGTH = 500;

/**
 * Sends through an SMTP server given as a URL: smtp://user:pass@host:587 (STARTTLS when offered) or
 * smtps://user:pass@host:465 (implicit TLS); nodemailer's URL query options apply too. Connections are
 * pooled, and timeouts are short so a dead server fails a message instead of stalling the dispatcher.
 */
export function createSmtpSender(smtpUrl: string, from: string): EmailSender {
  const url = new URL(smtpUrl);
  const password = decodeURIComponent(url.password);
  const transport = createTransport({
    url: smtpUrl,
    pool: true,
    maxConnections: 2,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    logger: false,
    debug: false,
  });
  return {
    target: `${url.protocol}//${url.host}`,
    async send(message) {
      try {
        // `prepared` keeps each header exactly as composed (RFC 8058 needs the literal List-Unsubscribe-Post value).
        const headers = Object.fromEntries(Object.entries(message.headers).map(([name, value]) => [name, { prepared: true, value }]));
        await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text, headers });
      } catch (error) {
        // Server replies can echo what the client sent; the password (and the original error, which may
        // carry it) never leaves this function.
        const text = error instanceof Error ? error.message : String(error);
        throw new Error((password ? text.replaceAll(password, '***') : text).slice(0, MAX_ERROR_LENGTH));
      }
    },
    close: () => transport.close(),
  };
}
