/** SQLSTATE codes the services react to (the same from pg and PGlite). */
export const sqlState = {
  uniqueViolation: '23505',
  checkViolation: '23514',
  foreignKeyViolation: '23503',
} as const;

export function hasSqlState(error: unknown, state: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === state;
}
