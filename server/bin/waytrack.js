#!/usr/bin/env node
// The waytrack CLI: runs the TypeScript sources through tsx's loader (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
