import createClient, { type Middleware } from 'openapi-fetch';
import { session } from '../auth/session.ts';
import { settings } from '../settings.ts';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];
export type WebVideo = Schemas['WebVideo'];
export type Template = Schemas['Template'];
type VideoPage = Schemas['WebVideoPage'];
export type Aspect = NonNullable<WebVideo['aspect']>;
export type SubscriptionStatus = Schemas['SubscriptionStatus'];
export type PlanPrice = Schemas['PlanPrice'];
export type WebApiKey = Schemas['WebApiKey'];
export type CreditPack = Schemas['CreditPack'];
export type CheckedImage = Schemas['ApiImage'];

/** The client of every API call the app makes; paths, parameters and bodies are typed from /openapi.json. */
export const api = createClient<paths>({ baseUrl: settings.apiBaseUrl });

const sentToken = new WeakMap<Request, string>();
const authorize: Middleware = {
  onRequest({ request }) {
    const token = session.token();
    if (token && !request.headers.has('Authorization')) {
      request.headers.set('Authorization', `Bearer ${token}`);
      sentToken.set(request, token);
    }
    return request;
  },
  onResponse({ request, response }) {
    // The token this request carried was refused: it expired or the provider's keys changed. Sign out.
    if (response.status === 401 && sentToken.get(request) === session.token()) {
      session.expire('Your sign-in has expired. Sign in again to continue.');
    }
    return response;
  },
};
api.use(authorize);

/** An API failure as the app shows it: the service's `message` and `hint`, never the raw body. */
export class ApiProblem extends Error {
  constructor(
    message: string,
    readonly hint: string | undefined,
    readonly code: string | undefined,
    readonly status: number | undefined,
  ) {
    super(message);
    this.name = 'ApiProblem';
  }
}

/**
 * Reads every error shape the service answers: the shared `{error: {code, message, hint}, message}`, the
 * older `{error: "…"}` / `{message: "…"}` and the OAuth `{error, error_description}`.
 */
export function toProblem(body: unknown, status: number | undefined): ApiProblem {
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const detail = typeof record.error === 'object' && record.error !== null ? (record.error as Record<string, unknown>) : {};
  const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value : undefined);
  const message =
    text(detail.message) ?? text(record.message) ?? text(record.error_description) ?? text(record.error) ?? `The service answered with status ${status ?? 'unknown'}.`;
  return new ApiProblem(message, text(detail.hint), text(detail.code) ?? (typeof record.error === 'string' ? record.error : undefined), status);
}

/** The data of a call, or its failure thrown as an ApiProblem (a network failure too). */
export async function call<T>(request: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await request;
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiProblem('The service could not be reached.', 'Check your connection and try again.', 'network_error', undefined);
  }
  if (result.error !== undefined || !result.response.ok) throw toProblem(result.error, result.response.status);
  return result.data as T;
}

/** One video of the caller, found in the pages of GET /user/videos (newest first); undefined when gone. */
export async function findVideo(id: string, signal?: AbortSignal): Promise<WebVideo | undefined> {
  for (let page = 1; page <= 50; page++) {
    const found: VideoPage = await call(api.GET('/user/videos', { params: { query: { page, pageSize: 100 } }, signal }));
    const video = found.videos.find((candidate) => candidate.id === id);
    if (video) return video;
    if (!found.has_more) return undefined;
  }
  return undefined;
}
