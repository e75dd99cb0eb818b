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
