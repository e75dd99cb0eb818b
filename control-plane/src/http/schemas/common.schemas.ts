import { z } from 'zod';

export const ErrorDetail = z
  .object({
    code: z.string().meta({ description: 'Stable, machine-readable error code.', example: 'not_found' }),
    message: z.string().meta({ description: 'What went wrong, in English.' }),
    status: z.number().int().meta({ description: 'The HTTP status code.' }),
    hint: z.string().meta({ description: 'What to do about it.' }),
    documentation_url: z.url().meta({ description: 'Where this code is documented.' }),
  })
  .meta({ id: 'ErrorDetail' });

export const ErrorResponse = z
  .object({
    error: ErrorDetail,
    message: z.string().meta({ description: 'Repeats error.message.' }),
  })
  .meta({ id: 'Error', description: 'Every failure has this shape.' });

export type ErrorResponseBody = z.infer<typeof ErrorResponse>;
