/**
 * Makes a singing video from a local photo, end to end, through the public API:
 *
 *   PETSING_API_KEY=psk_live_… PETSING_BASE_URL=http://localhost:8080 \
 *     npx tsx sdk/examples/make-video.ts photo.jpg [--template 1] [--aspect 9:16] [--out video.mp4]
 *
 * Uploads the photo (POST /v1/images: the service finds the pet's face), starts a video with a template song
 * (one credit), waits for it and saves the MP4.
 */
import { writeFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { parseArgs } from 'node:util';
import { Petsing, PetsingError, VideoFailedError, type CreateVideoRequest } from '@petsing/sdk';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { template: { type: 'string' }, aspect: { type: 'string' }, out: { type: 'string' } },
});
const photo = positionals[0];
const apiKey = process.env.PETSING_API_KEY;
if (!photo || !apiKey) {
  console.error('Usage: PETSING_API_KEY=… [PETSING_BASE_URL=http://localhost:8080] make-video.ts <photo> [--template id] [--aspect square|4:5|9:16] [--out file.mp4]');
  process.exit(2);
}
const petsing = new Petsing({ apiKey, baseUrl: process.env.PETSING_BASE_URL ?? 'http://localhost:8080' });

try {
  const image = await petsing.uploadImage(photo);
  if (!image.face) throw new Error('No pet face was found in the photo: try a photo where the face is clear and faces the camera.');
  console.log(`Uploaded ${photo}: face found (confidence ${image.face.confidence.toFixed(2)})`);

  const templateId = values.template ?? (await petsing.listTemplates())[0]?.id;
  if (!templateId) throw new Error('The service has no templates.');
  const created = await petsing.createVideo({
    image_id: image.id,
    template_id: templateId,
    ...(values.aspect ? { aspect: values.aspect as CreateVideoRequest['aspect'] } : {}),
  });
  console.log(`Video ${created.id} started with template ${templateId}; ${created.credits_remaining} credits left`);

  const video = await petsing.waitForVideo(created.id, {
    onUpdate: (update) => console.log(`  ${update.status} ${update.progress ?? 0}%`),
  });
  const download = await fetch(video.video_url!);
  if (!download.ok) throw new Error(`Downloading the video answered ${download.status}`);
  const out = values.out ?? `${basename(photo, extname(photo))}.mp4`;
  await writeFile(out, Buffer.from(await download.arrayBuffer()));
  console.log(`Saved ${out}`);
} catch (error) {
  if (error instanceof PetsingError) console.error(`${error.code} (${error.status}): ${error.message}${error.hint ? `\n${error.hint}` : ''}`);
  else if (error instanceof VideoFailedError) console.error(`The render failed: ${error.code}: ${error.message}`);
  else console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
