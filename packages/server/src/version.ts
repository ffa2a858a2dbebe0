import { readFileSync } from 'node:fs';
import { packageManifest } from './paths';

export const version: string = JSON.parse(readFileSync(packageManifest, 'utf8')).version;
