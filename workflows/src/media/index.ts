// Media rules and assets both the control plane and render nodes use. Dependency-free: no image library.
export * from './image-limits.ts';
export * from './sample-pet.ts';
export * from './delivery-audio.ts';
