import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'vitest';
import { json, type Json } from './http.ts';

export type RecordedResponse = { operation: string; status: number; body: unknown };

/**
 * Checks real responses against the service's own /openapi.json: each (operationId, status) must be
 * documented and the JSON body must match its schema. Returns the pairs that were checked.
 */
export async function expectDocumentedResponses(baseUrl: string, recorded: RecordedResponse[]): Promise<Set<string>> {
  const document = await json(fetch(`${baseUrl}/openapi.json`));
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  for (const [name, schema] of Object.entries(document.components.schemas)) ajv.addSchema(schema as object, `#/components/schemas/${name}`);
  const operations = new Map<string, Json>();
  for (const item of Object.values(document.paths) as Json[]) for (const operation of Object.values(item) as Json[]) operations.set(operation.operationId, operation);
  const checked = new Set<string>();
  for (const { operation, status, body } of recorded) {
    const spec = operations.get(operation);
    expect(spec, operation).toBeDefined();
    const response = spec.responses[String(status)] ?? spec.responses[`${String(status)[0]}XX`];
    expect(response, `${operation} ${status} is documented`).toBeDefined();
    const schema = response.content?.['application/json']?.schema;
    if (!schema) {
      expect(body, `${operation} ${status} has no body`).toBeUndefined();
      continue;
    }
    const validate = ajv.compile({ ...schema, $defs: undefined });
    expect(validate(body), `${operation} ${status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    checked.add(`${operation} ${status}`);
  }
  return checked;
}
