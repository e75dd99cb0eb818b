import { sql, type Kysely, type Transaction } from 'kysely';
import { RENDER_STAGES, type RenderedFace, type RenderStage, type VideoSync } from '@petsing/workflows';
import type { Database, NewVideo, Video, VideoStatus } from '../db/schema.ts';
import { CreditRepository } from './credit.repository.ts';
import { CREDITS_PER_VIDEO, FREE_CREDITS_PER_MONTH, FREE_CREDITS_PER_VIDEO } from '../domain/pricing.ts';

/** What the status websocket and the notifier publish on every status change. */
export type VideoStatusEvent = {
  videoId: string;
  userId: string;
  status: VideoStatus;
  progress: number;
  failureCode: string | null;
  failureReason: string | null;
};

export const VIDEO_STATUS_CHANNEL = 'video_status';
/** Announced by a trigger on every update or delete of a video row (payload: its id); see VideoService.get. */
export const VIDEO_CHANGED_CHANNEL = 'video_changed';

/** The failure code of a video stopped by its owner (POST /v1/videos/{id}/cancel) or by its deadline. */
export const CANCELED_CODE = 'canceled';

export type Charge = { kind: 'api_credit' } | { kind: 'free_credit'; month: string } | { kind: 'subscription' };

/** What a failed video's refund gave back: its payment, and the credits returned (none for a subscription, or a free credit of a past month). */
export type Refund = { payment: Video['payment']; credits: number };

/** What a finished render stored, and where its face came from (absent: the render node did not say). */
export type RenderOutput = { outputKey: string; thumbnailKey: string; watermark: boolean; face?: RenderedFace; sync?: VideoSync };

export class VideoRepository {
  constructor(private readonly db: Kysely<Database>) {}

  findById(id: string): Promise<Video | undefined> {
    return this.db.selectFrom('videos').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Which of these ids have a video row. */
  async existingIds(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('videos').select('id').where('id', 'in', ids).execute();
    return new Set(rows.map((row) => row.id));
  }

  findOwned(id: string, userId: string): Promise<Video | undefined> {
    return this.db.selectFrom('videos').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  }

  listOwned(userId: string, options: { limit: number; offset?: number }): Promise<Video[]> {
    return this.db
      .selectFrom('videos')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(options.limit)
      .offset(options.offset ?? 0)
      .execute();
  }

  async countOwned(userId: string): Promise<number> {
    const row = await this.db
      .selectFrom('videos')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /**
   * Inserts the video and pays for it in one transaction: API credits (ledger −CREDITS_PER_VIDEO; the balance
   * CHECK refuses an overdraft), a free web credit (refused when none is left this month), or a subscription.
   * Returns undefined when the payment is refused; nothing is written then.
   */
  async insertPaid(video: NewVideo & { id: string }, charge: Charge): Promise<{ video: Video; creditsRemaining: number } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      let creditsRemaining = 0;
      if (charge.kind === 'free_credit') {
        const consumed = await consumeFreeCredit(trx, video.user_id, charge.month);
        if (consumed === undefined) return undefined;
        creditsRemaining = consumed;
      }
      const inserted = await trx.insertInto('videos').values(video).returningAll().executeTakeFirstOrThrow();
      if (charge.kind === 'api_credit') {
        const spent = await trx
          .insertInto('credit_ledger')
          .values({ user_id: video.user_id, delta: -CREDITS_PER_VIDEO, reason: 'video_create', video_id: video.id })
          .returning('id')
          .executeTakeFirst()
          .then(() => true)
          .catch((error: { code?: string }) => {
            if (error.code === '23514') return false;
            throw error;
          });
        if (!spent) throw new InsufficientCredits();
        creditsRemaining = (await trx.selectFrom('credit_balances').select('balance').where('user_id', '=', video.user_id).executeTakeFirstOrThrow()).balance;
      }
      return { video: inserted, creditsRemaining };
    }).catch((error: unknown) => {
      if (error instanceof InsufficientCredits) return undefined;
      throw error;
    });
  }

  /** The account's API credit balance, for the refusal of a create it cannot pay. */
  creditBalance(userId: string): Promise<number> {
    return new CreditRepository(this.db).balance(userId);
  }

  /**
   * Videos still `pending` or `processing` whose row has not changed since `before`, oldest first, a page
   * at a time (keyset: pass the last row of the previous page as `after`).
   */
  listUnsettled(before: Date, limit: number, after?: Pick<Video, 'updated_at' | 'id'>): Promise<Video[]> {
    let query = this.db
      .selectFrom('videos')
      .selectAll()
      .where('status', 'in', ['pending', 'processing'])
      .where('updated_at', '<', before);
    if (after) {
      query = query.where((eb) =>
        eb.or([eb('updated_at', '>', after.updated_at), eb.and([eb('updated_at', '=', after.updated_at), eb('id', '>', after.id)])]),
      );
    }
    return query.orderBy('updated_at').orderBy('id').limit(limit).execute();
  }

  async setImageKey(id: string, imageKey: string): Promise<void> {
    await this.db.updateTable('videos').set({ image_key: imageKey, updated_at: new Date() }).where('id', '=', id).execute();
  }

  async setWorkflowId(id: string, workflowId: string): Promise<void> {
    await this.db.updateTable('videos').set({ workflow_id: workflowId }).where('id', '=', id).execute();
  }

  /** Moves a queued video to `processing`; idempotent for a video already there. */
  markProcessing(id: string): Promise<Video | undefined> {
    return this.changeStatus(id, ['pending', 'processing'], { status: 'processing' });
  }

  /** Starts a re-render of a finished video; the previous output stays until the new one replaces it. */
  markRerendering(id: string): Promise<Video | undefined> {
    return this.changeStatus(id, ['completed', 'processing'], { status: 'processing', progress: 0, failure_code: null, failure_reason: null, render_stage: null, render_stage_at: null });
  }

  /**
   * Moves a `processing` video to `stage` from now, unless it reached that stage or a later one already (a retried
   * activity, a signal that came late). Answers the stage it left and since when, when it moved.
   */
  async enterStage(id: string, stage: RenderStage, now = new Date()): Promise<{ left: RenderStage | null; since: Date | null } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const before = await trx.selectFrom('videos').select(['status', 'render_stage', 'render_stage_at']).where('id', '=', id).forUpdate().executeTakeFirst();
      if (!before || before.status !== 'processing') return undefined;
      if (before.render_stage && RENDER_STAGES.indexOf(before.render_stage) >= RENDER_STAGES.indexOf(stage)) return undefined;
      const video = await trx.updateTable('videos').set({ render_stage: stage, render_stage_at: now, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
      await notify(trx, video);
      return { left: before.render_stage, since: before.render_stage_at };
    });
  }

  async recordProgress(id: string, progress: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const video = await trx
        .updateTable('videos')
        .set({ progress, updated_at: new Date() })
        .where('id', '=', id)
        .where('status', '=', 'processing')
        .where('progress', '<', progress)
        .returningAll()
        .executeTakeFirst();
      if (video) await notify(trx, video);
    });
  }

  /** `firstCompletion`: this call completed a video that had never completed (a re-render's completion is not one). */
  complete(id: string, output: RenderOutput): Promise<{ video: Video; replaced: string[]; firstCompletion: boolean } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const before = await trx.selectFrom('videos').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
      // A canceled video was refunded: its render's output must not be delivered (the caller deletes it).
      if (!before || (before.status === 'failed' && before.failure_code === CANCELED_CODE)) return undefined;
      const video = await trx
        .updateTable('videos')
        .set({
          status: 'completed',
          progress: 100,
          output_key: output.outputKey,
          thumbnail_key: output.thumbnailKey,
          has_watermark: output.watermark,
          // Where this render's face came from (a render node older than the field says nothing: left as it was).
          ...(output.face ? { face_source: output.face.source, face_model: output.face.model ?? null } : {}),
          // The render's sync report (likewise left as it was when the render node did not make one).
          ...(output.sync ? { sync: JSON.stringify(output.sync) } : {}),
          failure_code: null,
          failure_reason: null,
          completed_at: new Date(),
          updated_at: new Date(),
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      if (before.status !== 'completed' || before.output_key !== output.outputKey) await notify(trx, video);
      const replaced = [before.output_key, before.thumbnail_key].filter(
        (key): key is string => key !== null && key !== output.outputKey && key !== output.thumbnailKey,
      );
      return { video, replaced, firstCompletion: before.completed_at === null };
    });
  }

  /**
   * Fails the video and gives back what it cost, exactly once: an API credit as a ledger `refund` (the
   * unique index allows one per video), a free credit through credit_returned_at. A video already
   * completed or deleted is left alone, and so is a canceled one (its code stays `canceled`). `failed`: this call
   * changed its status to failed (a retry finds it failed already); `refund`: what this call gave back.
   */
  fail(id: string, failure: { code: string; reason: string }): Promise<{ video: Video; failed: boolean; refund: Refund | undefined } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const before = await trx.selectFrom('videos').select('status').where('id', '=', id).forUpdate().executeTakeFirst();
      if (!before) return undefined;
      const video = await trx
        .updateTable('videos')
        .set({ status: 'failed', failure_code: failure.code, failure_reason: failure.reason, updated_at: new Date() })
        .where('id', '=', id)
        .where((eb) => eb.or([
          eb('status', 'in', ['pending', 'processing']),
          eb.and([eb('status', '=', 'failed'), eb('failure_code', 'is distinct from', CANCELED_CODE)]),
        ]))
        .returningAll()
        .executeTakeFirst();
      if (!video) return undefined;
      const refund = await giveBack(trx, video);
      if (refund) await notify(trx, video);
      return { video, failed: before.status !== 'failed', refund };
    });
  }

  /**
   * Cancels a video that has not completed: `failed` with code `canceled`, and what it cost given back
   * exactly once (as fail does). The row lock orders it against a completing render: whichever commits
   * first wins, and complete() leaves a canceled video alone. A video that ever completed (a re-render
   * runs on a completed one) is not canceled, nor is one already failed; both are answered as they are.
   */
  cancel(id: string, reason: string): Promise<{ outcome: 'canceled' | 'completed' | 'failed'; video: Video; refund?: Refund } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const before = await trx.selectFrom('videos').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
      if (!before) return undefined;
      if (before.status === 'completed' || before.completed_at !== null) return { outcome: 'completed' as const, video: before };
      if (before.status === 'failed') return { outcome: 'failed' as const, video: before };
      const video = await trx
        .updateTable('videos')
        .set({ status: 'failed', failure_code: CANCELED_CODE, failure_reason: reason, updated_at: new Date() })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      const refund = await giveBack(trx, video);
      await notify(trx, video);
      return { outcome: 'canceled' as const, video, ...(refund ? { refund } : {}) };
    });
  }

  /** A failed watermark-removal re-render: the video keeps its previous (watermarked) output. */
  abandonRerender(id: string, failure: { code: string; reason: string }): Promise<Video | undefined> {
    return this.changeStatus(id, ['processing'], { status: 'completed', progress: 100, failure_code: failure.code, failure_reason: failure.reason });
  }

  async delete(id: string): Promise<Video | undefined> {
    return this.db.deleteFrom('videos').where('id', '=', id).returningAll().executeTakeFirst();
  }

  private changeStatus(
    id: string,
    from: VideoStatus[],
    values: Partial<Pick<Video, 'status' | 'progress' | 'failure_code' | 'failure_reason' | 'render_stage' | 'render_stage_at'>>,
  ): Promise<Video | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const before = await trx.selectFrom('videos').select('status').where('id', '=', id).forUpdate().executeTakeFirst();
      if (!before || !from.includes(before.status)) return undefined;
      const video = await trx
        .updateTable('videos')
        .set({ ...values, updated_at: new Date() })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      if (before.status !== video.status) await notify(trx, video);
      return video;
    });
  }
}

class InsufficientCredits extends Error {}

/**
 * Gives back what a failed video cost, once (credit_returned_at): an API credit as a ledger `refund` (the
 * unique index allows one per video), a free credit to this month's. Returns what this call gave back, if it did.
 */
async function giveBack(trx: Transaction<Database>, video: Video): Promise<Refund | undefined> {
  const returned = await trx
    .updateTable('videos')
    .set({ credit_returned_at: new Date() })
    .where('id', '=', video.id)
    .where('credit_returned_at', 'is', null)
    .returning('payment')
    .executeTakeFirst();
  if (!returned) return undefined;
  if (returned.payment === 'api_credit') {
    await trx.insertInto('credit_ledger').values({ user_id: video.user_id, delta: CREDITS_PER_VIDEO, reason: 'refund', video_id: video.id }).execute();
    return { payment: returned.payment, credits: CREDITS_PER_VIDEO };
  }
  if (returned.payment === 'free_credit') {
    return { payment: returned.payment, credits: (await returnFreeCredit(trx, video.user_id, video.created_at)) ? FREE_CREDITS_PER_VIDEO : 0 };
  }
  return { payment: returned.payment, credits: 0 };
}

/** Takes a video's free credit from this month's; a new month starts again from FREE_CREDITS_PER_MONTH. Returns what is left. */
async function consumeFreeCredit(trx: Transaction<Database>, userId: string, month: string): Promise<number | undefined> {
  const row = await trx
    .updateTable('users')
    .set({
      free_credits: sql<number>`case when free_credits_month = ${month}::date then free_credits - ${sql.lit(FREE_CREDITS_PER_VIDEO)} else ${sql.lit(FREE_CREDITS_PER_MONTH - FREE_CREDITS_PER_VIDEO)} end`,
      free_credits_month: month,
      updated_at: new Date(),
    })
    .where('id', '=', userId)
    .where((eb) => eb.or([eb('free_credits_month', '<>', sql<Date>`${month}::date`), eb('free_credits', '>=', FREE_CREDITS_PER_VIDEO)]))
    .returning('free_credits')
    .executeTakeFirst();
  return row?.free_credits;
}

/** Gives a free credit back, but only within the month it was spent in (a new month has reset anyway); answers whether it did. */
async function returnFreeCredit(trx: Transaction<Database>, userId: string, spentAt: Date): Promise<boolean> {
  const month = `${spentAt.toISOString().slice(0, 7)}-01`;
  const result = await trx
    .updateTable('users')
    .set({ free_credits: sql<number>`least(free_credits + ${sql.lit(FREE_CREDITS_PER_VIDEO)}, ${sql.lit(FREE_CREDITS_PER_MONTH)})` })
    .where('id', '=', userId)
    .where('free_credits_month', '=', sql<Date>`${month}::date`)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

async function notify(trx: Transaction<Database>, video: Video): Promise<void> {
  const event: VideoStatusEvent = {
    videoId: video.id,
    userId: video.user_id,
    status: video.status,
    progress: video.progress,
    failureCode: video.failure_code,
    failureReason: video.failure_reason,
  };
  await sql`select pg_notify(${VIDEO_STATUS_CHANNEL}, ${JSON.stringify(event)})`.execute(trx);
}
