import { join } from 'node:path';

export { loadAnnotations, type AnnotatedPhoto as Annotation } from '../src/detect-evaluation.ts';

/** The real pet photos beside the project (../shared/pets), read in place: several may not be copied. */
export const PETS = join(import.meta.dirname, '..', '..', '..', 'shared', 'pets');
