import { z } from 'zod';
import { emailSchema } from '../../services/user.service.ts';

/** The development sign-in (POST /dev-identity/token); exists only while no OIDC_* provider is configured. */

export const DevSignInRequest = z
  .object({ email: emailSchema.meta({ description: 'The address to sign in as; no password is asked.', example: 'me@example.com' }) })
  .meta({ id: 'DevSignInRequest' });

export const DevSignInResult = z
  .object({
    id_token: z.string().meta({ description: 'An ID token (JWT) of the development identity provider, for Authorization: Bearer on the web-app endpoints and the status websocket.' }),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().meta({ description: 'Seconds until the token expires.', example: 86400 }),
    email: z.string().meta({ description: 'The address signed in as (trimmed, lower case).', example: 'me@example.com' }),
  })
  .meta({ id: 'DevSignInResult' });
