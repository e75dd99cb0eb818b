import { join } from 'node:path';

/**
 * This checkout's cache of work that is the same for every DATA_DIR on the machine and costly to redo (an empty
 * embedded database, the template songs, a test run's workflow bundle): node_modules/.cache/petsing, private to its
 * user. Deleting it only makes the next start slower.
 */
export const CHECKOUT_CACHE_DIR = join(import.meta.dirname, '..', '..', '..', 'node_modules', '.cache', 'petsing');
