#!/usr/bin/env node
// Node 20 cannot run the TypeScript sources itself; tsx compiles them on load.
// A published package would ship the built JavaScript instead.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
