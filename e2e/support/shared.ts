import { inject } from 'vitest';
import type { SharedServer } from './shared-server';

/** The server the e2e project's global setup started for all test files (see shared-server.ts). */
export const sharedServer = (): SharedServer => inject('sharedServer');
