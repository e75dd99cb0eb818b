/** Response bodies in tests are asserted on field by field, so they are read as loosely typed JSON. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export async function json(response: Response | Promise<Response>): Promise<Json> {
  return (await response).json();
}
