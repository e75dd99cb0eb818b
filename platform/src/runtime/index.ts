export * from './config.ts';
export * from './temporal-connection.ts';
export * from './temporal-logging.ts';
export * from './run-worker.ts';
