import { readFileSync } from 'node:fs';
import path from 'node:path';

/** package.json's version, read at start (the file sits one level above both src/ and dist/). */
export const SERVICE_VERSION: string = JSON.parse(readFileSync(path.resolve(__dirname, '..', 'package.json'), 'utf8')).version;
