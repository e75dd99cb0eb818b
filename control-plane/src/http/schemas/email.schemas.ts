import { z } from 'zod';

/** Records of the unsubscribe endpoints (field names are ours: the spec leaves them open; see docs/web-app.md). */

const token = z.string().min(1).max(512).meta({ description: 'The per-user token of the unsubscribe link (List-Unsubscribe header or email footer).' });

export const UnsubscribeQuery = z.object({ token });

export const OneClickUnsubscribeQuery = z.object({ token: token.optional() });

export const UnsubscribeRequest = z
  .object({ token: token.optional() })
  .meta({ id: 'UnsubscribeRequest', description: 'The token, when it is not in the query string.' });

export const OneClickUnsubscribeForm = z
  .object({
    'List-Unsubscribe': z.literal('One-Click').optional().meta({ description: 'Sent by mail clients for RFC 8058 one-click unsubscription.' }),
    token: token.optional(),
  })
  .meta({ id: 'OneClickUnsubscribeForm', description: 'RFC 8058 one-click body: List-Unsubscribe=One-Click, the token in the query string.' });

export const UnsubscribeResult = z
  .object({
    unsubscribed: z.literal(true),
    email: z.string().meta({ description: 'The opted-out address, masked.', example: 'a***@example.com' }),
    message: z.string(),
  })
  .meta({ id: 'UnsubscribeResult' });
