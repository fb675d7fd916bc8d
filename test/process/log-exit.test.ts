import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * The last lines of a stop, written as the server writes them, while the first is still being written: fs.write's
 * callback is held back, as a busy pipe or disk holds an asynchronous write. The server exits as this script does.
 */
function lastLinesWritten(): string[] {
  const script = `
    const fs = require('node:fs');
    const { createLogger, exitOnceWritten, logDestination } = require('./src/process/logger');
    const write = fs.write;
    fs.write = (...args) => setTimeout(() => write(...args), 100);
    const destination = logDestination();
    const logger = createLogger('info', destination);
    logger.info('shutting down');
    logger.info('stopped');
    exitOnceWritten(destination, 0);
  `;
  const output = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: path.resolve(__dirname, '..', '..'),
    env: { PATH: process.env.PATH ?? '' },
    encoding: 'utf8',
  });
  return output
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line).msg);
}

describe('the last lines at exit', () => {
  it('are all written, in the order they were logged, though a write was in flight at the exit', () => {
    expect(lastLinesWritten()).toEqual(['shutting down', 'stopped']);
  });
});
