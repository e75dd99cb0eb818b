import { z } from 'zod';
import { ScopeSchema, type Scope } from '../domain/scopes.ts';
import type { AppContext } from '../runtime/app-context.ts';
import { notFound } from '../errors/app-error.ts';
import { parseCommandArguments } from '../http/validation.ts';

const scopesArgument = z
  .string()
  .transform((value) => value.split(',').map((scope) => scope.trim()).filter(Boolean))
  .pipe(z.array(ScopeSchema).min(1, 'give at least one scope'));

/**
 * Operator commands that touch the database. The CLI runs them in-process, or — when the embedded
 * service already holds the single-process PGlite database — sends them to it over DATA_DIR/control.sock.
 */
const operatorCommands = {
  'users.create': {
    input: z.object({ email: z.string() }),
    run: async (context: AppContext, input: { email: string }) => {
      const user = await context.services.users.create({ email: input.email });
      return { id: user.id, email: user.email, created_at: user.created_at.toISOString() };
    },
  },
  'api-keys.create': {
    input: z.object({ user: z.string().min(1), scopes: scopesArgument, name: z.string().max(100).optional() }),
    run: async (context: AppContext, input: { user: string; scopes: Scope[]; name?: string | undefined }) => {
      const user = await context.services.users.resolve(input.user);
      const { key, record } = await context.services.apiKeys.create({
        userId: user.id,
        scopes: input.scopes,
        ...(input.name ? { name: input.name } : {}),
      });
      return { key, id: record.id, user_id: user.id, display_prefix: record.display_prefix, scopes: record.scopes };
    },
  },
  'api-keys.list': {
    input: z.object({ user: z.string().min(1) }),
    run: async (context: AppContext, input: { user: string }) => {
      const user = await context.services.users.resolve(input.user);
      const keys = await context.services.apiKeys.list(user.id);
      return {
        user_id: user.id,
        keys: keys.map((key) => ({
          id: key.id,
          name: key.name,
          display_prefix: key.display_prefix,
          scopes: key.scopes,
          created_at: key.created_at.toISOString(),
          last_used_at: key.last_used_at?.toISOString() ?? null,
          revoked_at: key.revoked_at?.toISOString() ?? null,
        })),
      };
    },
  },
  'api-keys.revoke': {
    input: z.object({ user: z.string().min(1), id: z.uuid() }),
    run: async (context: AppContext, input: { user: string; id: string }) => {
      const user = await context.services.users.resolve(input.user);
      if (!(await context.services.apiKeys.revoke(user.id, input.id))) throw notFound(`Active API key ${input.id} of ${input.user}`);
      return { id: input.id, revoked: true };
    },
  },
  'credits.grant': {
    input: z.object({ user: z.string().min(1), amount: z.coerce.number().int() }),
    run: async (context: AppContext, input: { user: string; amount: number }) => {
      const user = await context.services.users.resolve(input.user);
      const { balance } = await context.services.credits.grant(user.id, input.amount);
      return { user_id: user.id, granted: input.amount, balance };
    },
  },
  'emails.list': {
    input: z.object({
      status: z.enum(['pending', 'sent', 'failed']).optional(),
      limit: z.coerce.number().int().min(1).max(1000).default(50),
    }),
    run: async (context: AppContext, input: { status?: 'pending' | 'sent' | 'failed' | undefined; limit: number }) => {
      const messages = await context.services.email.list(input);
      return {
        emails: messages.map((message) => ({
          id: message.id,
          kind: message.kind,
          to: message.to_address,
          subject: message.subject,
          status: message.status,
          attempts: message.attempts,
          last_error: message.last_error,
          dedupe_key: message.dedupe_key,
          headers: message.headers,
          text: message.text_body,
          created_at: message.created_at.toISOString(),
          sent_at: message.sent_at?.toISOString() ?? null,
        })),
      };
    },
  },
  'videos.show': {
    input: z.object({ id: z.uuid() }),
    run: async (context: AppContext, input: { id: string }) => {
      const video = await context.services.videos.findForOperator(input.id);
      return {
        id: video.id,
        user_id: video.user_id,
        origin: video.origin,
        status: video.status,
        render_stage: video.render_stage,
        progress: video.progress,
        failure_code: video.failure_code,
        failure_reason: video.failure_reason,
        has_watermark: video.has_watermark,
        aspect: video.aspect,
        face_hints: video.face_hints,
        // The face the owner was shown (null: the photo was never checked) and where the last render's face came from.
        photo_check: video.photo_check,
        face_source: video.face_source,
        face_model: video.face_model,
        // The last render's sync report (VideoSync) and the start in the audio its creator asked for.
        sync: video.sync,
        audio_start_seconds: video.audio_start_seconds,
        created_at: video.created_at.toISOString(),
        completed_at: video.completed_at?.toISOString() ?? null,
      };
    },
  },
  migrate: {
    input: z.object({}),
    run: async () => ({ migrated: true }),
  },
} as const;

export type OperatorCommandName = keyof typeof operatorCommands;

/** Each command's argument schema, by name (the tests send every string argument a NUL through the control socket). */
export const operatorCommandInputs = Object.fromEntries(Object.entries(operatorCommands).map(([name, command]) => [name, command.input])) as {
  [Name in OperatorCommandName]: (typeof operatorCommands)[Name]['input'];
};

export async function runOperatorCommand(context: AppContext, name: string, rawInput: unknown): Promise<unknown> {
  if (!Object.hasOwn(operatorCommands, name)) throw new Error(`Unknown operator command ${name}`);
  const command = operatorCommands[name as OperatorCommandName];
  const input = parseCommandArguments(command.input, rawInput);
  return (command.run as (context: AppContext, input: unknown) => Promise<unknown>)(context, input);
}
