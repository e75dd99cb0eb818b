/** Response bodies in tests are asserted on field by field, so they are read as loosely typed JSON. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export async function json(response: Response | Promise<Response>): Promise<Json> {
  return (await response).json();
}

/**
 * A request to the service at `baseUrl` with an optional bearer `key`: `body` sent as JSON, or as multipart when it is
 * FormData. Answers the status and the body as parsed JSON (undefined when empty).
 */
export async function apiCall(baseUrl: string, method: string, path: string, key: string | undefined, body?: unknown): Promise<{ status: number; body: Json }> {
  const form = body instanceof FormData;
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...(body !== undefined && !form ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: form ? body : JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Reads a video's event stream (GET /v1/videos/{id}/events) until it is `completed` or `failed`; answers that status. */
export async function videoOutcome(baseUrl: string, id: string, key: string): Promise<'completed' | 'failed'> {
  const response = await fetch(`${baseUrl}/v1/videos/${id}/events`, { headers: { Authorization: `Bearer ${key}` } });
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body!) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const data = buffer.slice(0, end).split('\n').find((line) => line.startsWith('data: '));
      buffer = buffer.slice(end + 2);
      if (!data) continue;
      const { status } = JSON.parse(data.slice(6)) as { status: string };
      if (status === 'completed' || status === 'failed') return status;
    }
  }
  throw new Error(`the event stream of video ${id} ended before it finished`);
}
