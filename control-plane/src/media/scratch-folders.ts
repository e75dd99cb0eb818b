import { createScratchDirectory, removeAbandonedScratch } from '@petsing/platform/tools';

/**
 * The prefixes of the scratch folders the control plane's processes make in the system's temp folder: request
 * uploads, and the work folders of speech, soundtracks and audio preparation. One left behind is a crashed
 * process's, and the sweeper removes it.
 */
export const SCRATCH_FOLDERS = { upload: 'petsing-upload', speech: 'petsing-speech', soundtrack: 'petsing-soundtrack', audio: 'petsing-audio' } as const;

/** A new private folder (0700) for one request's received files. */
export function createUploadFolder(): Promise<string> {
  return createScratchDirectory(SCRATCH_FOLDERS.upload);
}

/** Removes the control plane's scratch folders last changed before `changedBefore`; answers how many. */
export function removeAbandonedScratchFolders(changedBefore: Date, root?: string): Promise<number> {
  return removeAbandonedScratch(Object.values(SCRATCH_FOLDERS), changedBefore, root);
}
