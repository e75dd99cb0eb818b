// Audio analyses the control plane (audio preparation's voice check) and render nodes (the mouth's drive) share.
// Plain arithmetic on samples: importing them loads no native or Temporal code.
export * from './levels.ts';
export * from './vocal-activity.ts';
export * from './singing-window.ts';
export * from './pcm-wav.ts';
