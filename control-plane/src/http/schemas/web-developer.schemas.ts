import { z } from 'zod';
import { ScopeSchema } from '../../domain/scopes.ts';

/** The dashboard's developer endpoints (ID token): the caller's API keys and API credit ledger. Field names are ours. */

export const WebApiKey = z
  .object({
    id: z.uuid(),
    name: z.string().meta({ description: 'The label given at creation.' }),
    prefix: z.string().meta({ description: 'The first characters of the key, to recognise it; the key itself is shown only once.', example: 'psk_live_a1b2c3' }),
    scopes: z.array(ScopeSchema),
    created_at: z.iso.datetime(),
    last_used_at: z.iso.datetime().nullable().meta({ description: 'When the key last authenticated a request; null if never.' }),
    revoked_at: z.iso.datetime().nullable().meta({ description: 'When the key was revoked (it answers 401 since); null while active.' }),
  })
  .meta({ id: 'WebApiKey' });

export const WebApiKeyList = z
  .object({ keys: z.array(WebApiKey).meta({ description: 'Every key of the account, newest first, revoked ones included.' }) })
  .meta({ id: 'WebApiKeyList' });

export const CreateWebApiKeyRequest = z
  .object({
    name: z.string().trim().min(1).max(100).meta({ description: 'A label to recognise the key by (1 to 100 characters).', example: 'my laptop' }),
    scopes: z
      .array(ScopeSchema)
      .min(1)
      .max(2)
      .refine((scopes) => scopes.includes('videos:read'), { message: 'must include videos:read (read-only, or read and write)' })
      .meta({ description: 'videos:read (read-only), or videos:read and videos:write (read and write).', example: ['videos:read', 'videos:write'] }),
  })
  .meta({ id: 'CreateWebApiKeyRequest' });

export const CreatedWebApiKey = z
  .object({
    key: z.string().meta({ description: 'The key in full, shown this once: only its SHA-256 digest is stored.', example: 'psk_live_…' }),
    api_key: WebApiKey,
  })
  .meta({ id: 'CreatedWebApiKey' });

export const WebApiKeyParams = z.object({ id: z.uuid().meta({ description: 'A key id from GET /user/api-keys.' }) });

export const WebCreditsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Ledger entries to return, newest first (1 to 100).' }),
});
