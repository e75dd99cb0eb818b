import express, { Router, type Response } from 'express';
import { AppError } from '../../errors/app-error.ts';
import type { AppContext } from '../../runtime/app-context.ts';
import type { EmailService } from '../../services/email.service.ts';
import { errorResponses, jsonResponse, type OpenAPIRegistry } from '../openapi.ts';
import { OneClickUnsubscribeForm, OneClickUnsubscribeQuery, UnsubscribeQuery, UnsubscribeRequest, UnsubscribeResult } from '../schemas/email.schemas.ts';
import { parseBody, parseQuery } from '../validation.ts';

/** An RFC 8058 body is `List-Unsubscribe=One-Click` (plus, at most, a token): nothing bigger is accepted. */
const ONE_CLICK_FORM = express.urlencoded({ extended: false, limit: '2kb', parameterLimit: 5 });

/**
 * GET and POST /email/unsubscribe: the link of every lifecycle email (List-Unsubscribe). The token is the
 * only credential; following the link, or a mail client's one-click POST, opts its holder out. A browser
 * following the link gets the web app's page instead (site.ts), which opts out with the POST and says so.
 */
export function emailRoutes(context: AppContext): Router {
  const router = Router();
  const { email } = context.services;

  router.get('/email/unsubscribe', async (req, res) => {
    await unsubscribe(email, parseQuery(OneClickUnsubscribeQuery, req).token, res);
  });

  router.post('/email/unsubscribe', ONE_CLICK_FORM, async (req, res) => {
    // RFC 8058 clients POST to the List-Unsubscribe URL, so the token is in its query string.
    await unsubscribe(email, parseQuery(OneClickUnsubscribeQuery, req).token ?? parseBody(UnsubscribeRequest, req).token, res);
  });

  return router;
}

async function unsubscribe(email: EmailService, token: string | undefined, res: Response): Promise<void> {
  if (!token) {
    throw new AppError('invalid_request', 'No unsubscribe token was sent.', {
      hint: 'Use the unsubscribe link of an email exactly as it was sent: it carries ?token=.',
    });
  }
  const { email: address } = await email.unsubscribe(token);
  res.set('Cache-Control', 'no-store');
  res.json(UnsubscribeResult.parse({
    unsubscribed: true,
    email: maskEmail(address),
    message: 'You will no longer receive petsing emails about your account (welcome, video ready, free credits renewed).',
  }));
}

/** a***@example.com: enough for the person to recognise the address, not enough to harvest it. */
function maskEmail(address: string): string {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, Math.min(1, at))}***${address.slice(at)}`;
}

export function registerEmailPaths(registry: OpenAPIRegistry): void {
  const description = 'The token comes from the List-Unsubscribe link of a lifecycle email. Opting out again is fine: it answers 200 again.';
  registry.registerPath({
    method: 'get', path: '/email/unsubscribe', security: [], tags: ['web-app'], operationId: 'unsubscribeEmail',
    summary: 'Opt out of lifecycle email (the unsubscribe link)',
    description:
      `${description} A request that prefers text/html over JSON (a browser following the link) is answered with the web app's page ` +
      '(index.html, Vary: Accept), which opts out through POST /email/unsubscribe and shows the masked address; every other request gets this JSON.',
    request: { query: UnsubscribeQuery },
    responses: {
      200: jsonResponse('The holder of the token is opted out.', UnsubscribeResult),
      ...errorResponses('invalid_request', 'invalid_unsubscribe_token'),
    },
  });
  registry.registerPath({
    method: 'post', path: '/email/unsubscribe', security: [], tags: ['web-app'], operationId: 'unsubscribeEmailOneClick',
    summary: 'Opt out of lifecycle email (RFC 8058 one-click)',
    description: `${description} Mail clients POST \`List-Unsubscribe=One-Click\` as a form to the link itself (token in the query); `
      + 'other callers may send the token in a JSON body instead.',
    request: {
      query: OneClickUnsubscribeQuery,
      body: {
        required: false,
        content: {
          'application/x-www-form-urlencoded': { schema: OneClickUnsubscribeForm },
          'application/json': { schema: UnsubscribeRequest },
        },
      },
    },
    responses: {
      200: jsonResponse('The holder of the token is opted out.', UnsubscribeResult),
      ...errorResponses('invalid_request', 'invalid_unsubscribe_token', 'malformed_json', 'nesting_too_deep', 'payload_too_large'),
    },
  });
}
