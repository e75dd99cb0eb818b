import { z } from 'zod';

const ErrorDetail = z
  .object({
    code: z.string().meta({ description: 'Stable, machine-readable error code.', example: 'not_found' }),
    message: z.string().meta({ description: 'What went wrong, in English.' }),
    status: z.number().int().meta({ description: 'The HTTP status code.' }),
    hint: z.string().meta({ description: 'What to do about it.' }),
    documentation_url: z.url().meta({ description: 'Where this code is documented.' }),
    retryable: z.boolean().meta({ description: 'Whether sending the same request again, unchanged, can succeed (after retry_after_seconds when given). Fixed per code; see /docs/errors.' }),
    retry_after_seconds: z.number().int().min(0).optional().meta({ description: 'Seconds to wait before retrying, as in the Retry-After header (429, and 503 where the service knows).' }),
    credit_balance: z.number().int().optional().meta({ description: 'insufficient_credits only: the credit balance now.' }),
    credits_required: z.number().int().optional().meta({ description: 'insufficient_credits only: what the create would cost.' }),
    image_id: z.uuid().optional().meta({ description: 'face_not_found only: the checked photo, kept 24 hours, to create from again with image_id and face.mouth.' }),
  })
  .meta({ id: 'ErrorDetail' });

export const ErrorResponse = z
  .object({
    error: ErrorDetail,
    message: z.string().meta({ description: 'Repeats error.message.' }),
  })
  .meta({ id: 'Error', description: 'Every failure has this shape.' });

export type ErrorResponseBody = z.infer<typeof ErrorResponse>;
