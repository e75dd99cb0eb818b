// A face-rig worker thread. Like the CLI, it runs the TypeScript sources through tsx (no build step),
// and it must register tsx itself: a worker thread does not inherit its parent's loader.
import { register } from 'tsx/esm/api';

register();
await import('./rig-thread.ts');
