import type { AppContext } from '../../control-plane/src/runtime/app-context.ts';

/**
 * The template songs, seeded into a test service the way `petsing start` seeds them (TemplateService.seed): the
 * first test file of a machine to seed makes them for real (the synthesizer, ffmpeg, the loudness measurement), and
 * the seeding keeps them (control-plane/src/templates/kept-template-songs.ts, under a hash of the code that makes
 * them); every later one copies them into its own bucket and database. Seven songs cost each file about 20 s of CPU
 * otherwise.
 */
export async function seedTemplates(context: AppContext): Promise<void> {
  await context.services.templates.seed(context.logger);
}
