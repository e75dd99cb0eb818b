export * from './config.ts';
export * from './temporal-connection.ts';
export * from './temporal-runtime.ts';
export * from './run-worker.ts';
export * from './temporal-log.ts';
