#!/usr/bin/env node
// The render node's CLI is TypeScript run through tsx (the project has no compile step).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
