export * from './contract.ts';
export * from './contract-parsing.ts';
