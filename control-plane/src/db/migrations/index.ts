import type { Migration } from 'kysely';
import * as initialSchema from './2026-11-26T00-00-00-initial-schema.ts';
import * as renderOrchestration from './2026-11-26T01-00-00-render-orchestration.ts';
import * as oauth from './2026-11-26T02-00-00-oauth.ts';
import * as publicApi from './2026-11-26T03-00-00-public-api.ts';
import * as templatePreparedAudio from './2026-11-26T04-00-00-template-prepared-audio.ts';
import * as hostedAudio from './2026-11-26T05-00-00-hosted-audio.ts';
import * as payments from './2026-11-26T07-00-00-payments.ts';
import * as faces from './2026-11-26T08-00-00-faces.ts';
import * as videoAspect from './2026-11-26T12-00-00-video-aspect.ts';
import * as webhooks from './2026-11-27T03-00-00-webhooks.ts';
import * as credentialRevocation from './2026-11-27T02-00-00-credential-revocation.ts';
import * as videoChanges from './2026-11-27T05-00-00-video-changes.ts';
import * as apiAudio from './2026-11-27T04-00-00-api-audio.ts';
import * as renderStages from './2026-11-28T00-00-00-render-stages.ts';
import * as storedFaces from './2026-11-29T02-00-00-stored-faces.ts';
import * as syncReport from './2026-11-29T03-00-00-sync-report.ts';
import * as audioWindow from './2026-11-29T04-00-00-audio-window.ts';

/** Every migration, keyed by its timestamped name; Kysely runs them in key order. */
export const migrations: Record<string, Migration> = {
  '2026-11-26T00-00-00-initial-schema': initialSchema,
  '2026-11-26T01-00-00-render-orchestration': renderOrchestration,
  '2026-11-26T02-00-00-oauth': oauth,
  '2026-11-26T03-00-00-public-api': publicApi,
  '2026-11-26T04-00-00-template-prepared-audio': templatePreparedAudio,
  '2026-11-26T05-00-00-hosted-audio': hostedAudio,
  '2026-11-26T07-00-00-payments': payments,
  '2026-11-26T08-00-00-faces': faces,
  '2026-11-26T12-00-00-video-aspect': videoAspect,
  '2026-11-27T03-00-00-webhooks': webhooks,
  '2026-11-27T02-00-00-credential-revocation': credentialRevocation,
  '2026-11-27T04-00-00-api-audio': apiAudio,
  '2026-11-27T05-00-00-video-changes': videoChanges,
  '2026-11-28T00-00-00-render-stages': renderStages,
  '2026-11-29T02-00-00-stored-faces': storedFaces,
  '2026-11-29T03-00-00-sync-report': syncReport,
  '2026-11-29T04-00-00-audio-window': audioWindow,
};
