import { z } from 'zod';

export const ApiTemplate = z
  .object({
    id: z.string().meta({ description: 'Numeric string; send back exactly as given, do not parse.', example: '1' }),
    name: z.string(),
    preview_video_url: z.url().nullable().optional(),
    preview_image_url: z.url().nullable().optional(),
  })
  .meta({ id: 'ApiTemplate' });

export const ApiTemplateList = z
  .object({ object: z.literal('list'), data: z.array(ApiTemplate) })
  .meta({ id: 'ApiTemplateList' });

export const ApiAccount = z
  .object({
    user_id: z.string(),
    credit_balance: z.number().int(),
    credits_per_video: z.number().int(),
    scopes: z.array(z.string()),
  })
  .meta({ id: 'ApiAccount' });

export const CreditLedgerEntry = z
  .object({
    delta: z.number().int().meta({ description: 'Positive for a purchase, grant or refund; negative for a spend.' }),
    reason: z.enum(['purchase', 'video_create', 'refund', 'grant']),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'CreditLedgerEntry' });

export const ApiCredits = z
  .object({
    balance: z.number().int(),
    credits_per_video: z.number().int(),
    recent: z.array(CreditLedgerEntry),
  })
  .meta({ id: 'ApiCredits' });
