import { readFileSync } from 'node:fs';
import path from 'node:path';

/** package.json's version, read at start (the file sits two levels above both src/process/ and dist/process/). */
export const SERVICE_VERSION: string = JSON.parse(readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8')).version;
